/**
 * Fused scaledDotProductAttention against the same attention written plainly
 * (softmax(q·kᵀ·scale)·v) on the CPU backend, forward + backward, [2, 4, 256, 64], causal off.
 * Process CPU time per step, median of REPS after two warm-ups.
 *   node scripts/run-ts.mjs scripts/perf/cpu-attention.ts
 */
import { Tensor, init, randn, scaledDotProductAttention, tidy } from '@surf/nn';

await init({ backend: 'cpu' });
const REPS = 9;
const shape = [2, 4, 256, 64];
const [q, k, v] = [0, 1, 2].map(() => randn(shape, { requiresGrad: true }));
const scale = 1 / Math.sqrt(64);
const ways: [string, () => Tensor][] = [
  ['fused', () => scaledDotProductAttention(q, k, v)],
  ['plain', () => q.matmul(k.transpose(-2, -1)).mul(scale).softmax(-1).matmul(v)],
];
for (const [name, f] of ways) {
  const times: number[] = [];
  for (let r = 0; r < REPS + 2; r++) {
    const c0 = process.cpuUsage();
    tidy(() => {
      f().sum().backward();
      void q.grad!.ndarray;
    });
    const c = process.cpuUsage(c0);
    for (const t of [q, k, v]) t.grad = null;
    if (r >= 2) times.push((c.user + c.system) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(6)} ${times[REPS >> 1].toFixed(1)} ms (min ${times[0].toFixed(1)})`);
}
