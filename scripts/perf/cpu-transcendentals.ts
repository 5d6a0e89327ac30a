/**
 * Times exp, tanh, silu, sigmoid, log and gelu over 4M float32 elements on the CPU backend
 * (process CPU time, which a busy shared box does not inflate as it does wall time: median of
 * REPS runs after a warm-up; with THREADS=1 that is the single thread's time), the figures docs/tuning-log.md compares with
 * PyTorch's CPU build (scripts/perf/cpu_transcendentals.py).
 *   node scripts/run-ts.mjs scripts/perf/cpu-transcendentals.ts
 */
import { Tensor, gelu, init, tensor, tidy } from '@surf/nn';
import { setCpuThreads } from '@surf/core';

await init({ backend: 'cpu' });
// THREADS=1 for the single-threaded figure.
if (process.env.THREADS) setCpuThreads({ threads: Number(process.env.THREADS) });

const N = 4 * 1024 * 1024;
const REPS = 25;
const data = new Float32Array(N);
for (let i = 0; i < N; i++) data[i] = ((i * 7919) % 20000) / 1000 - 10;
const x = tensor(data);

const ops: [string, (t: Tensor) => Tensor][] = [
  ['exp', (t) => t.exp()],
  ['tanh', (t) => t.tanh()],
  ['silu', (t) => t.silu()],
  ['sigmoid', (t) => t.sigmoid()],
  ['log', (t) => t.abs().log()],
  ['gelu', (t) => gelu(t)],
];
for (const [name, f] of ops) {
  const times: number[] = [];
  for (let r = 0; r < REPS + 2; r++) {
    const c0 = process.cpuUsage();
    tidy(() => {
      void f(x).ndarray; // materialised: the CPU backend computes synchronously
    });
    const c = process.cpuUsage(c0);
    if (r >= 2) times.push((c.user + c.system) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(8)} ${times[REPS >> 1].toFixed(2)} ms (min ${times[0].toFixed(2)})`);
}
