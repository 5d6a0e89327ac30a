import { View } from '../view';
import { gemmJs } from './matmul-js';
import { WasmGemm } from './wasm/gemm';

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
  if (wasm === undefined) wasm = WasmGemm.create();
  return wasm;
}

export function matmulInto(a: Float32Array, av: View, b: Float32Array, bv: View, out: Float32Array, impl: MatmulImpl = defaultImpl): void {
  const nd = av.ndim;
  const m = av.shape[nd - 2], k = av.shape[nd - 1], n = bv.shape[nd - 1];
  const batchShape = av.shape.slice(0, -2);
  const batches = batchShape.reduce((x, y) => x * y, 1);
  if (m === 0 || n === 0) return;
  if (k === 0) { out.fill(0); return; }
  const w = impl === 'js' ? null : wasmGemm();
  if (impl === 'wasm' && !w) throw new Error('matmul: WebAssembly SIMD is not available in this engine');
  w?.reset();
  const bIdx = new Int32Array(batchShape.length);
  for (let bt = 0; bt < batches; bt++) {
    let ab = av.offset, bb = bv.offset;
    for (let d = 0; d < batchShape.length; d++) { ab += bIdx[d] * av.strides[d]; bb += bIdx[d] * bv.strides[d]; }
    const A = { data: a, off: ab, rs: av.strides[nd - 2], cs: av.strides[nd - 1] };
    const B = { data: b, off: bb, rs: bv.strides[nd - 2], cs: bv.strides[nd - 1] };
    if (w && w.fits(m, n, k)) w.gemm(A, B, m, n, k, out, bt * m * n);
    else if (impl === 'wasm') throw new Error(`matmul: ${m}x${k}x${n} does not fit in WebAssembly memory`);
    else gemmJs(A, B, m, n, k, out, bt * m * n);
    for (let d = batchShape.length - 1; d >= 0; d--) { if (++bIdx[d] < batchShape[d]) break; bIdx[d] = 0; }
  }
}
