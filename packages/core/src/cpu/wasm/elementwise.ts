import type { DType } from '../../dtype';
import type { Expr } from '../../expr';
import { buildElementwiseModule, supportedByWasm } from './elementwise-kernel';
import { hasWasmSimd } from './simd';

type RunFn = (...ptrs: number[]) => void;

const align16 = (bytes: number) => (bytes + 15) & ~15;

/**
 * Runs flat float32 elementwise work on generated WebAssembly SIMD kernels: inputs are
 * copied into linear memory (a broadcast scalar as one float), the kernel runs 4 lanes at a
 * time, outputs are copied back. One compiled module per expression layout, cached.
 */
export class WasmElementwise {
  private memory = new WebAssembly.Memory({ initial: 1 });
  private f32 = new Float32Array(this.memory.buffer);
  private readonly kernels = new Map<string, RunFn | null>();

  private static instance: WasmElementwise | null | undefined;

  /** The shared runner, or null where WebAssembly SIMD is missing. */
  static get(): WasmElementwise | null {
    if (WasmElementwise.instance === undefined) WasmElementwise.instance = hasWasmSimd() ? new WasmElementwise() : null;
    return WasmElementwise.instance;
  }

  private kernel(key: string, outs: readonly Expr[], inDT: readonly DType[], steps: readonly ('u' | 'z')[]): RunFn | null {
    let k = this.kernels.get(key);
    if (k === undefined) {
      k = null;
      if (inDT.every((d) => d === 'float32') && outs.every((e) => supportedByWasm(e, inDT))) {
        try {
          const mod = new WebAssembly.Module(buildElementwiseModule(outs, steps));
          k = new WebAssembly.Instance(mod, { env: { memory: this.memory } }).exports.run as RunFn;
        } catch {
          k = null;
        }
      }
      this.kernels.set(key, k);
    }
    return k;
  }

  /**
   * Computes `outs` over n elements, or returns false (nothing written) when the expression
   * has no SIMD form or memory cannot grow; the caller then runs the JS kernel.
   */
  run(key: string, outs: readonly Expr[], outArrays: Float32Array[], inputs: { data: Float32Array; off: number }[], inDT: readonly DType[], steps: readonly ('u' | 'z')[], n: number, consts: readonly number[]): boolean {
    const fn = this.kernel(key, outs, inDT, steps);
    if (!fn) return false;
    const bytes = 4 * ((n + 3) & ~3);
    const inAt: number[] = [];
    let at = 16;
    for (const s of steps) { inAt.push(at); at = align16(at + (s === 'u' ? bytes : 4)); }
    const outAt = outArrays.map(() => { const a = at; at = align16(at + bytes); return a; });
    const constAt = at;
    at += 4 * consts.length;
    if (!this.ensure(at)) return false;
    const f = this.f32;
    inputs.forEach((x, i) => {
      if (steps[i] === 'u') f.set(x.data.subarray(x.off, x.off + n), inAt[i] >> 2);
      else f[inAt[i] >> 2] = x.data[x.off];
    });
    f.set(consts, constAt >> 2);
    fn((n + 3) & ~3, ...inAt, ...outAt, constAt);
    outArrays.forEach((o, k) => o.set(f.subarray(outAt[k] >> 2, (outAt[k] >> 2) + n)));
    return true;
  }

  private ensure(bytes: number): boolean {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return true;
    try {
      this.memory.grow(Math.ceil((bytes - have) / 65536));
    } catch {
      return false;
    }
    this.f32 = new Float32Array(this.memory.buffer);
    return true;
  }
}
