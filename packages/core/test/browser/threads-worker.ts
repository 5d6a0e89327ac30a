// Runs in a module Worker of a cross-origin-isolated page: the CPU backend there may block in
// Atomics.wait, so it starts its own worker threads on the shared wasm memory.
import { E, NDArray, createBackend, cpuThreads } from '@surf/core';
import { currentPool } from '../../src/cpu/threads/config';
import { rand } from '../lcg';

async function run(): Promise<unknown> {
  const be = await createBackend('cpu', { threads: 2 });
  const [m, k, n] = [64, 784, 128];
  const a = rand(m * k, 1),
    b = rand(k * n, 2);
  const A = NDArray.fromData(be, a, [m, k]),
    B = NDArray.fromData(be, b, [k, n]);
  const jobs0 = currentPool()?.jobs ?? 0;
  const got = (await A.matmul(B).data()) as Float32Array;
  const sq = (await A.map(E.mul(E.in(0), E.in(0))).data()) as Float32Array;
  let maxErr = 0;
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      maxErr = Math.max(maxErr, Math.abs(got[i * n + j] - s));
    }
  let sqOk = true;
  for (let i = 0; i < m * k; i++) if (sq[i] !== Math.fround(a[i] * a[i])) sqOk = false;
  return {
    isolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    threads: cpuThreads(),
    jobs: (currentPool()?.jobs ?? 0) - jobs0,
    maxErr,
    sqOk,
  };
}

run().then(
  (r) => postMessage(r),
  (e) => postMessage({ error: String(e?.stack ?? e) }),
);
