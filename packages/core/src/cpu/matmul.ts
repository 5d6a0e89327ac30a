import { DType, castScalar } from '../dtype';
import { Expr, exprKey } from '../expr';
import { View } from '../view';
import { gemmJs } from './matmul-js';
import { sharedArena } from './wasm/arena';
import { WasmElementwise } from './wasm/elementwise';
import { WasmGemm } from './wasm/gemm';
import { poolFor, threadThresholds } from './threads/config';

/**
 * Batched f32 matmul on the CPU: out[b] = a[b] · b[b] for every batch index, operands read
 * through their views (any strides: transposes, broadcast batches with stride 0). Each batch
 * runs on the WebAssembly SIMD kernels (f32 accumulation) where the engine has SIMD, else
 * on the plain-JS loop (f64 accumulation). NaN and Inf propagate: no term is skipped.
 */
export type MatmulImpl = 'auto' | 'wasm' | 'js';

let wasm: WasmGemm | null | undefined;
let defaultImpl: MatmulImpl = 'auto';

/** Picks the kernels CpuBackend's matmul uses (benchmarks compare them; 'auto' is best). */
export function setMatmulImpl(impl: MatmulImpl): void {
  defaultImpl = impl;
}

/** The WebAssembly kernels, compiled on first use; null where SIMD is unavailable. */
export function wasmGemm(): WasmGemm | null {
  if (wasm === undefined) wasm = WasmGemm.create(undefined, undefined, undefined, sharedArena());
  return wasm;
}

/** A matmul epilogue on the CPU: input 0 is the product; inputs are viewed at the output shape. */
export interface CpuEpilogue {
  expr: Expr;
  inputs: { data: unknown; dtype: DType; view: View }[];
}

/**
 * Computes the product into `out`; with an epilogue, returns whether it was applied too (on
 * the product in wasm memory, before the copy out: a single batch on the SIMD kernels, every
 * input float32, unmasked and contiguous or broadcast along rows). When false the caller
 * applies it.
 */
export function matmulInto(
  a: Float32Array,
  av: View,
  b: Float32Array,
  bv: View,
  out: Float32Array,
  impl: MatmulImpl = defaultImpl,
  epilogue?: CpuEpilogue,
): boolean {
  const nd = av.ndim;
  const m = av.shape[nd - 2],
    k = av.shape[nd - 1],
    n = bv.shape[nd - 1];
  const batchShape = av.shape.slice(0, -2);
  const batches = batchShape.reduce((x, y) => x * y, 1);
  if (m === 0 || n === 0) return false;
  if (k === 0) {
    out.fill(0);
    return false;
  }
  const w = impl === 'js' ? null : wasmGemm();
  if (impl === 'wasm' && !w) throw new Error('matmul: WebAssembly SIMD is not available in this engine');
  w?.reset();
  // Threads split each product along m or n (bit-identical to one thread) above a size.
  const pool = w ? poolFor(2 * m * n * k, threadThresholds().minMatmulFlops) : null;
  const bIdx = new Int32Array(batchShape.length);
  for (let bt = 0; bt < batches; bt++) {
    let ab = av.offset,
      bb = bv.offset;
    for (let d = 0; d < batchShape.length; d++) {
      ab += bIdx[d] * av.strides[d];
      bb += bIdx[d] * bv.strides[d];
    }
    const A = { data: a, off: ab, rs: av.strides[nd - 2], cs: av.strides[nd - 1] };
    const B = { data: b, off: bb, rs: bv.strides[nd - 2], cs: bv.strides[nd - 1] };
    if (w && w.fits(m, n, k)) {
      const fused = w.gemm(
        A,
        B,
        m,
        n,
        k,
        out,
        bt * m * n,
        batches === 1 && epilogue ? fuse(epilogue, m, n) : undefined,
        pool,
      );
      if (batches === 1) return fused;
    } else if (impl === 'wasm') throw new Error(`matmul: ${m}x${k}x${n} does not fit in WebAssembly memory`);
    else gemmJs(A, B, m, n, k, out, bt * m * n);
    for (let d = batchShape.length - 1; d >= 0; d--) {
      if (++bIdx[d] < batchShape[d]) break;
      bIdx[d] = 0;
    }
  }
  return false;
}

/** The epilogue as a kernel on the product where the gemm left it (m × n, rows ldc bytes apart). */
function fuse(
  ep: CpuEpilogue,
  m: number,
  n: number,
): ((cAt: number, ldc: number, free: number) => boolean) | undefined {
  const ew = WasmElementwise.get();
  if (!ew || ep.inputs.some((x) => x.dtype !== 'float32' || x.view.mask)) return undefined;
  const consts: { value: number; dtype: DType }[] = [];
  const inDT: DType[] = ['float32', ...ep.inputs.map((x) => x.dtype)];
  const key = `mm-epilogue|${exprKey(ep.expr, consts)}|${inDT.join(',')}`;
  const constVals = consts.map((c) => castScalar(c.value, c.dtype));
  const ops = ep.inputs.map((x) => {
    const v = x.view,
      d = v.ndim;
    // A single batch: every batch dim has size 1, so only the offset and the last two strides matter.
    return {
      data: x.data as Float32Array,
      off: v.offset,
      rs: m === 1 ? 0 : v.strides[d - 2],
      cs: n === 1 ? 0 : v.strides[d - 1],
    };
  });
  return (cAt, ldc, free) => ew.runInPlace(key, ep.expr, { at: cAt, rs: ldc }, ops, inDT, m, n, constVals, free);
}
