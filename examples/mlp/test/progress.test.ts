import { ProgressBar, formatEta, renderBar } from '../src/progress';

describe('progress bar', () => {
  test('fills in proportion to the steps done and shows rate, loss and ETA', () => {
    const s = renderBar({ epoch: 2, epochs: 10, step: 50, steps: 100, stepsPerSec: 42.25, loss: 0.123456 }, 10);
    // 50 steps left at 42.25 steps/s: 1.18 s.
    expect(s).toBe('epoch  2/10 █████░░░░░  50/100    42.3 steps/s  loss 0.1235  ETA 1s');
    expect(renderBar({ epoch: 1, epochs: 1, step: 0, steps: 4, stepsPerSec: 0, loss: undefined }, 4)).toContain('░░░░');
    expect(renderBar({ epoch: 1, epochs: 1, step: 0, steps: 4, stepsPerSec: 0, loss: undefined }, 4)).toContain(
      'ETA --',
    );
    expect(renderBar({ epoch: 1, epochs: 1, step: 4, steps: 4, stepsPerSec: 1, loss: 1 }, 4)).toContain('████');
    expect([formatEta(42.4), formatEta(185), formatEta(3725), formatEta(NaN)]).toEqual(['42s', '3m05s', '1h02m', '--']);
  });

  test('draws in place on a terminal; piped output gets plain lines at each quarter', () => {
    const tty: string[] = [];
    const bar = new ProgressBar({ write: (s: string) => tty.push(s), isTTY: true });
    bar.update({ epoch: 1, epochs: 1, step: 1, steps: 1, stepsPerSec: 1, loss: 2 });
    bar.line('done');
    expect(tty[0].startsWith('\r')).toBe(true);
    expect(tty.slice(1).join('')).toBe('\r\x1b[Kdone\n');

    const piped: string[] = [];
    const quiet = new ProgressBar({ write: (s: string) => piped.push(s), isTTY: false });
    for (let step = 1; step <= 8; step++)
      quiet.update({ epoch: 1, epochs: 2, step, steps: 8, stepsPerSec: 4, loss: 0.5 });
    quiet.line('epoch 1 done');
    expect(piped).toEqual([
      'epoch 1/2  step 2/8  4.0 steps/s  loss 0.5000  ETA 2s\n',
      'epoch 1/2  step 4/8  4.0 steps/s  loss 0.5000  ETA 1s\n',
      'epoch 1/2  step 6/8  4.0 steps/s  loss 0.5000  ETA 1s\n',
      'epoch 1 done\n',
    ]);
    expect(piped.join('')).not.toMatch(/\r|\x1b/);
  });
});
