import { Code } from './code';
import { ModuleBuilder } from './module';
import { nodeBuiltin } from '../node-builtin';

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

const probeRelaxed = () => probe((c) => c.v128Const0().v128Const0().v128Const0().f32x4RelaxedMadd().drop());

/**
 * Whether relaxed SIMD (f32x4.relaxed_madd) is available; detected once. Node 20's V8 (11.3)
 * has it behind a flag that Chrome 114 and Node 22 turned on by default (the proposal is
 * finished: Wasm 3.0), so in Node the flag is set before the second probe. It only widens
 * what validates; modules compiled before are unaffected.
 */
export function hasRelaxedSimd(): boolean {
  if (relaxed === undefined) {
    relaxed = hasWasmSimd() && probeRelaxed();
    if (!relaxed && hasWasmSimd() && enableInNode()) relaxed = probeRelaxed();
  }
  return relaxed;
}

function enableInNode(): boolean {
  // SURF_NO_RELAXED_SIMD=1 keeps the engine's own default (and the mul + add kernels).
  if (
    (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.SURF_NO_RELAXED_SIMD ===
    '1'
  )
    return false;
  const v8 = nodeBuiltin<{ setFlagsFromString?: (flags: string) => void }>('node:v8');
  if (typeof v8?.setFlagsFromString !== 'function') return false;
  try {
    v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
    return true;
  } catch {
    return false;
  }
}
