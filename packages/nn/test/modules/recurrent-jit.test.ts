import type { Backend } from '@surf/core';
import { Tensor, jit, manualSeed, mseLoss, nn, optim, randn } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// An LSTM + GRU training step recorded by jit replays with the eager losses and parameters.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

async function train(backend: Backend, jitted: boolean): Promise<{ losses: number[]; replayed: number }> {
  return on(backend, async () => {
    manualSeed(5);
    const lstm = new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true });
    const gru = new nn.GRU(8, 2);
    const opt = new optim.Adam([...lstm.parameters(), ...gru.parameters()], { lr: 0.05 });
    // One batch four times: the loss must fall on it (different batches need not compare).
    const batch = { x: randn([5, 2, 3]), y: randn([5, 2, 2]) };
    const data = [batch, batch, batch, batch];
    const step = (x: Tensor, y: Tensor): Tensor => {
      opt.zeroGrad();
      const [h] = lstm.forward(x);
      const [out] = gru.forward(h);
      const loss = mseLoss(out, y);
      loss.backward();
      opt.step();
      return loss;
    };
    const f = jitted ? jit(step) : step;
    const losses: number[] = [];
    for (const { x, y } of data) losses.push(await f(x, y).item());
    return { losses, replayed: jitted ? (f as ReturnType<typeof jit>).stats.replayed : 0 };
  });
}

testEach(['cpu', 'webgpu'], 'a jitted LSTM/GRU step replays with the eager losses (%s)', async (kind) => {
  const be = kind === 'cpu' ? b.cpu : b.gpu();
  const eager = await train(be, false);
  const jitted = await train(be, true);
  expect(jitted.replayed).toBeGreaterThan(0);
  expect(eager.losses[3]).toBeLessThan(eager.losses[0]);
  jitted.losses.forEach((l, i) => expect(Math.abs(l - eager.losses[i])).toBeLessThan(1e-5));
});
