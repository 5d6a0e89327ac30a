import { E } from '@surf/core';
import { buildElementwiseModule } from '../../packages/core/src/cpu/wasm/elementwise-kernel';
const N = 4 * 1024 * 1024;
const mem = new WebAssembly.Memory({ initial: 600, maximum: 1024, shared: true });
const f = new Float32Array(mem.buffer);
for (let i = 0; i < N; i++) f[16 + i] = ((i * 7919) % 20000) / 1000 - 10;
const x = E.in(0);
const ee = E.exp(E.neg(E.abs(x)));
for (const [name, e] of [['copy', E.neg(E.in(0))], ['exp', E.exp(E.in(0))], ['stable', E.div(E.where(E.lt(x, E.f(0)), ee, E.f(1)), E.add(E.f(1), ee))], ['recip', E.recip(E.add(E.f(1), E.exp(E.neg(x))))], ['expdiv', E.div(E.f(1), E.exp(x))], ['expabsneg', ee], ['expmul', E.mul(E.exp(x), x)], ['erf', E.erf(x)]] as const) {
  const inst = new WebAssembly.Instance(new WebAssembly.Module(buildElementwiseModule([e], ['u'])), { env: { memory: mem } });
  const run = inst.exports.run as (...a: number[]) => void;
  const ts: number[] = [];
  for (let r = 0; r < 20; r++) { const c0 = process.cpuUsage(); run(1, 4 * N, 64, 0, 64 + 4 * N + 64, 0, 8 * N + 256); const c1 = process.cpuUsage(c0); ts.push((c1.user + c1.system) / 1000); }
  ts.sort((a, b) => a - b);
  console.log(name, ts[0].toFixed(2), ts[10].toFixed(2));
}
