// The page: its own main thread cannot block, so the CPU backend there keeps to one thread;
// the module worker beside it gets threads (threads-worker.ts).
import { NDArray, createBackend, cpuThreads } from '@surf/core';

async function main(): Promise<void> {
  const be = await createBackend('cpu', { threads: 2 });
  const x = NDArray.fromData(be, new Float32Array(4096).fill(2), [64, 64]);
  const y = (await x.matmul(x).data()) as Float32Array;
  const mainThread = { isolated: crossOriginIsolated, threads: cpuThreads(), value: y[0] };
  const w = new Worker('/worker.js', { type: 'module' });
  const worker = await new Promise((resolve) => {
    w.onmessage = (e) => resolve(e.data);
    w.onerror = (e) => resolve({ error: e.message });
  });
  (window as unknown as { __surfReport: unknown }).__surfReport = { mainThread, worker };
}

main().catch((e) => {
  (window as unknown as { __surfReport: unknown }).__surfReport = { error: String(e?.stack ?? e) };
});
