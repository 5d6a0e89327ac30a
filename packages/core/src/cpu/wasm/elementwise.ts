import type { DType } from '../../dtype';
import { wordAt } from './address';
import type { Expr } from '../../expr';
import { Arena, sharedArena } from './arena';
import { WasmKind, buildElementwiseModule, supportedByWasm } from './elementwise-kernel';
import { hasWasmSimd } from './simd';
import { poolFor, threadThresholds } from '../threads/config';
import { splitRange } from '../threads/split';

type RunFn = (...args: number[]) => void;
/** A kernel: the calling thread's function and its module (worker threads load the same). */
interface Kernel {
  fn: RunFn;
  mod: WebAssembly.Module;
  bytes: Uint8Array;
}

const align16 = (bytes: number) => (bytes + 15) & ~15;

/** A 2-d float32 operand of the loop: element (r, j) is data[off + r·rs + j·cs]. */
export interface Operand2d {
  data: Float32Array;
  off: number;
  rs: number;
  cs: number;
}

/** An operand already in linear memory: a row at byte `at`, rows `rs` bytes apart. */
export interface Resident {
  at: number;
  rs: number;
}

/** The wasm layout an operand takes, or null when the loop cannot read it (a strided row). */
function kindOf(x: Operand2d, rows: number): WasmKind | null {
  if (x.cs === 1) return 'u';
  if (x.cs === 0) return x.rs === 0 || rows === 1 ? 'z' : 'c';
  return null;
}

// Compiled modules are shared by every runner; instances are per linear memory.
const modules = new Map<string, { mod: WebAssembly.Module; bytes: Uint8Array } | null>();

/**
 * Runs float32 elementwise work over a rows × inner grid on generated WebAssembly SIMD
 * kernels: contiguous rows, a row broadcast down the rows (a bias), one value per row or a
 * scalar. Inputs are copied into linear memory (rows padded to a multiple of 4 floats), the
 * kernel runs 4 lanes at a time, outputs are copied back. A matmul epilogue runs in place on
 * the product, which is already there. One compiled module per expression and layout, cached.
 */
export class WasmElementwise {
  private readonly kernels = new Map<string, Kernel | null>();

  private static instance: WasmElementwise | null | undefined;

  constructor(readonly arena: Arena) {}

  /** The runner on the shared arena, or null where WebAssembly SIMD is missing. */
  static get(): WasmElementwise | null {
    if (WasmElementwise.instance === undefined)
      WasmElementwise.instance = hasWasmSimd() ? new WasmElementwise(sharedArena()) : null;
    return WasmElementwise.instance;
  }

  private kernel(
    key: string,
    outs: readonly Expr[],
    inDT: readonly DType[],
    kinds: readonly WasmKind[],
  ): Kernel | null {
    const full = `${key}|${kinds.join('')}`;
    let k = this.kernels.get(full);
    if (k === undefined) {
      k = null;
      if (inDT.every((d) => d === 'float32') && outs.every((e) => supportedByWasm(e, inDT))) {
        try {
          let mod = modules.get(full);
          if (mod === undefined) {
            const bytes = buildElementwiseModule(outs, kinds);
            mod = { mod: new WebAssembly.Module(bytes), bytes };
            modules.set(full, mod);
          }
          if (mod)
            k = {
              ...mod,
              fn: new WebAssembly.Instance(mod.mod, { env: { memory: this.arena.memory } }).exports.run as RunFn,
            };
        } catch {
          modules.set(full, null);
          k = null;
        }
      }
      this.kernels.set(full, k);
    }
    return k;
  }

  /**
   * Computes `outs` over a rows × inner grid into `outArrays` (row-major, rows·inner floats
   * each), or returns false (nothing written) when the expression or a layout has no SIMD
   * form or memory cannot grow; the caller then runs the JS kernel. `key` names the
   * expression and dtypes (the JS kernel's cache key).
   */
  run(
    key: string,
    outs: readonly Expr[],
    outArrays: Float32Array[],
    inputs: readonly Operand2d[],
    inDT: readonly DType[],
    rows: number,
    inner: number,
    consts: readonly number[],
  ): boolean {
    return this.exec(key, outs, inputs, inDT, rows, inner, consts, 16, outArrays);
  }

  /**
   * A matmul epilogue: `expr` over the rows × inner product resident at `c` (input 0), other
   * inputs from JS arrays, written in place over the product. Scratch starts at byte `base`.
   */
  runInPlace(
    key: string,
    expr: Expr,
    c: Resident,
    inputs: readonly Operand2d[],
    inDT: readonly DType[],
    rows: number,
    inner: number,
    consts: readonly number[],
    base: number,
  ): boolean {
    return this.exec(key, [expr], [c, ...inputs], inDT, rows, inner, consts, base, c);
  }

  private exec(
    key: string,
    outs: readonly Expr[],
    inputs: readonly (Operand2d | Resident)[],
    inDT: readonly DType[],
    rows: number,
    inner: number,
    consts: readonly number[],
    base: number,
    target: Float32Array[] | Resident,
  ): boolean {
    const kinds: WasmKind[] = [];
    for (const x of inputs) {
      const kd = 'data' in x ? kindOf(x, rows) : 'u';
      if (!kd) return false;
      kinds.push(kd);
    }
    const kern = this.kernel(key, outs, inDT, kinds);
    if (!kern) return false;
    const inner4 = (inner + 3) & ~3;
    const rowBytes = 4 * inner4;
    // Where each input goes and its row stride in bytes.
    const at: number[] = [],
      rs: number[] = [];
    // Operands that live in the arena (CPU storages) are read where they are: the loop reads
    // whole 4-float steps, so a row whose length is not a multiple of 4 is over-read into
    // what follows it (lanes that are dropped); only a one-value-per-row operand must be a
    // contiguous column to be read in place.
    const home = inputs.map((x, i) => {
      if (!('data' in x)) return -1;
      const h = this.arena.addressOf(x.data);
      return h >= 0 && x.rs >= 0 && (kinds[i] !== 'c' || x.rs === 1) ? h + 4 * x.off : -1;
    });
    let end = align16(Math.max(base, this.arena.scratch));
    inputs.forEach((x, i) => {
      if (!('data' in x)) {
        at.push(x.at);
        rs.push(x.rs);
        return;
      }
      if (home[i] >= 0) {
        at.push(home[i]);
        rs.push(kinds[i] === 'z' ? 0 : kinds[i] === 'c' ? 4 : rows === 1 ? 0 : 4 * x.rs);
        return;
      }
      at.push(end);
      const k = kinds[i];
      if (k === 'z') {
        rs.push(0);
        end += 16;
      } else if (k === 'c') {
        rs.push(4);
        end = align16(end + 4 * rows);
      } else if (x.rs === 0 || rows === 1) {
        rs.push(0);
        end = align16(end + rowBytes);
      } else {
        rs.push(rowBytes);
        end = align16(end + rows * rowBytes);
      }
    });
    const outAt: number[] = [],
      outRs: number[] = [];
    // Outputs in the arena are written in place when their rows hold whole 4-float steps.
    const outHome = Array.isArray(target) ? target.map((o) => (inner4 === inner ? this.arena.addressOf(o) : -1)) : [];
    if (Array.isArray(target)) {
      target.forEach((_, k) => {
        if (outHome[k] >= 0) {
          outAt.push(outHome[k]);
          outRs.push(rowBytes);
          return;
        }
        outAt.push(end);
        outRs.push(rowBytes);
        end = align16(end + rows * rowBytes);
      });
    } else {
      outAt.push(target.at);
      outRs.push(target.rs);
    }
    const constAt = end;
    end += 4 * consts.length + 16;
    if (!this.arena.ensure(end)) return false;
    const f = this.arena.f32;
    inputs.forEach((x, i) => {
      if (!('data' in x) || home[i] >= 0) return;
      const d0 = wordAt(at[i]);
      const { data, off } = x;
      const k = kinds[i];
      if (k === 'z') f[d0] = data[off];
      else if (k === 'c') for (let r = 0, s = off; r < rows; r++, s += x.rs) f[d0 + r] = data[s];
      else if (rs[i] === 0) f.set(data.subarray(off, off + inner), d0);
      else if (x.rs === inner && inner4 === inner) f.set(data.subarray(off, off + rows * inner), d0);
      else for (let r = 0; r < rows; r++) f.set(data.subarray(off + r * x.rs, off + r * x.rs + inner), d0 + r * inner4);
    });
    f.set(consts, wordAt(constAt));
    const pool = poolFor(rows * inner, threadThresholds().minElementwise);
    if (pool && pool.arena === this.arena) {
      // Rows split by rows, one long row (flat work) by 4-float steps; every element is
      // computed by the same instructions either way, so the bits do not change.
      const parts = pool.chunksPerThread * (pool.size + 1);
      const byRows = rows >= parts;
      const ranges = splitRange(byRows ? rows : inner4 >> 2, parts);
      const id = pool.fnId(kern.mod, kern.bytes, end, kern.fn);
      pool.run(
        ranges.map(([s, e]) => {
          const call = byRows ? [id, e - s, rowBytes] : [id, rows, 16 * (e - s)];
          inputs.forEach((_, i) => call.push(at[i] + (byRows ? s * rs[i] : kinds[i] === 'u' ? 16 * s : 0), rs[i]));
          outAt.forEach((a, k) => call.push(a + (byRows ? s * outRs[k] : 16 * s), outRs[k]));
          call.push(constAt);
          return [call];
        }),
        end,
      );
    } else {
      const args: number[] = [rows, rowBytes];
      inputs.forEach((_, i) => args.push(at[i], rs[i]));
      outAt.forEach((a, k) => args.push(a, outRs[k]));
      args.push(constAt);
      kern.fn(...args);
    }
    if (Array.isArray(target)) {
      target.forEach((o, k) => {
        if (outHome[k] >= 0) return;
        const d0 = wordAt(outAt[k]);
        if (inner4 === inner) o.set(f.subarray(d0, d0 + rows * inner));
        else for (let r = 0; r < rows; r++) o.set(f.subarray(d0 + r * inner4, d0 + r * inner4 + inner), r * inner);
      });
    }
    return true;
  }
}
