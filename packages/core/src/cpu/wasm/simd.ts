import { Code } from './code';
import { ModuleBuilder } from './module';

/** A module with one function using `op`: validates only where the engine has that feature. */
function probe(op: (c: Code) => Code): boolean {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') return false;
  const mb = new ModuleBuilder(1);
  mb.add({ name: 'f', params: [], results: [], locals: [], body: op(new Code()).bytes, exported: true });
  try {
    return WebAssembly.validate(mb.toBytes());
  } catch {
    return false;
  }
}

let simd: boolean | undefined;
let relaxed: boolean | undefined;

/** Whether WebAssembly SIMD (v128) is available; detected once. */
export function hasWasmSimd(): boolean {
  if (simd === undefined) simd = probe((c) => c.v128Const0().v128Const0().f32x4Add().drop());
  return simd;
}

/** Whether relaxed SIMD (f32x4.relaxed_madd) is available; detected once. */
export function hasRelaxedSimd(): boolean {
  if (relaxed === undefined) relaxed = hasWasmSimd() && probe((c) => c.v128Const0().v128Const0().v128Const0().f32x4RelaxedMadd().drop());
  return relaxed;
}
