import { E } from '@surf/core';
import { buildElementwiseModule } from '../../packages/core/src/cpu/wasm/elementwise-kernel';
const N = 4 * 1024 * 1024;
const mem = new WebAssembly.Memory({ initial: 600, maximum: 1024, shared: true });
const f = new Float32Array(mem.buffer);
for (let i = 0; i < N; i++) f[16 + i] = ((i * 7919) % 20000) / 1000 - 10;
for (const [name, e] of [['copy', E.neg(E.in(0))], ['exp', E.exp(E.in(0))], ['tanh', E.tanh(E.in(0))], ['log', E.log(E.in(0))]] as const) {
  const inst = new WebAssembly.Instance(new WebAssembly.Module(buildElementwiseModule([e], ['u'])), { env: { memory: mem } });
  const run = inst.exports.run as (...a: number[]) => void;
  const ts: number[] = [];
  for (let r = 0; r < 20; r++) { const c0 = process.cpuUsage(); run(1, 4 * N, 64, 0, 64 + 4 * N + 64, 0, 0); const c1 = process.cpuUsage(c0); ts.push((c1.user + c1.system) / 1000); }
  ts.sort((a, b) => a - b);
  console.log(name, ts[0].toFixed(2), ts[10].toFixed(2));
}
