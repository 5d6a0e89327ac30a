/**
 * Fused scaledDotProductAttention against the same attention written plainly
 * (softmax(q·kᵀ·scale)·v) on the CPU backend, forward + backward, [2, 4, 256, 64], causal off.
 * Process CPU time per step, median of REPS after two warm-ups; wall time alongside.
 *   node scripts/run-ts.mjs scripts/perf/cpu-attention.ts
 */
import { Tensor, init, randn, scaledDotProductAttention, tidy } from '@surf/nn';
import { setCpuThreads } from '@surf/core';

await init({ backend: 'cpu' });
// THREADS=1 for one thread's time (workers waiting count as CPU time otherwise).
if (process.env.THREADS) setCpuThreads({ threads: Number(process.env.THREADS) });
const REPS = 9;
const shape = [2, 4, 256, 64];
const [q, k, v] = [0, 1, 2].map(() => randn(shape, { requiresGrad: true }));
const scale = 1 / Math.sqrt(64);
const ways: [string, () => Tensor][] = [
  ['fused', () => scaledDotProductAttention(q, k, v)],
  ['plain', () => q.matmul(k.transpose(-2, -1)).mul(scale).softmax(-1).matmul(v)],
];
for (const [name, f] of ways) {
  const times: number[] = [],
    walls: number[] = [];
  for (let r = 0; r < REPS + 2; r++) {
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    tidy(() => {
      f().sum().backward();
      void q.grad!.ndarray;
    });
    const c = process.cpuUsage(c0);
    if (r >= 2) walls.push(performance.now() - w0);
    for (const t of [q, k, v]) t.grad = null;
    if (r >= 2) times.push((c.user + c.system) / 1000);
  }
  times.sort((a, b) => a - b);
  walls.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(6)} cpu ${times[REPS >> 1].toFixed(1)} ms (min ${times[0].toFixed(1)}), wall ${walls[REPS >> 1].toFixed(1)} ms (min ${walls[0].toFixed(1)})`,
  );
}
