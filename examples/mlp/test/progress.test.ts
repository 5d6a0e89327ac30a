import { ProgressBar, renderBar } from '../src/progress';

describe('progress bar', () => {
  test('fills in proportion to the steps done and shows rate and loss', () => {
    const s = renderBar({ epoch: 2, epochs: 10, step: 50, steps: 100, stepsPerSec: 42.25, loss: 0.123456 }, 10);
    expect(s).toBe('epoch  2/10 █████░░░░░  50/100    42.3 steps/s  loss 0.1235');
    expect(renderBar({ epoch: 1, epochs: 1, step: 0, steps: 4, stepsPerSec: 0, loss: undefined }, 4)).toContain('░░░░');
    expect(renderBar({ epoch: 1, epochs: 1, step: 4, steps: 4, stepsPerSec: 1, loss: 1 }, 4)).toContain('████');
  });

  test('draws in place on a terminal and stays silent in piped output', () => {
    const tty: string[] = [];
    const bar = new ProgressBar({ write: (s: string) => tty.push(s), isTTY: true });
    bar.update({ epoch: 1, epochs: 1, step: 1, steps: 1, stepsPerSec: 1, loss: 2 });
    bar.line('done');
    expect(tty[0].startsWith('\r')).toBe(true);
    expect(tty.slice(1).join('')).toBe('\r\x1b[Kdone\n');

    const piped: string[] = [];
    const quiet = new ProgressBar({ write: (s: string) => piped.push(s), isTTY: false });
    quiet.update({ epoch: 1, epochs: 1, step: 1, steps: 1, stepsPerSec: 1, loss: 2 });
    quiet.line('done');
    expect(piped).toEqual(['done\n']);
  });
});
