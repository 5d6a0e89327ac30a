import type { MatRef } from './wasm/gemm';

/**
 * The plain-JS matmul, used where WebAssembly SIMD is missing. A and B are first packed into
 * contiguous row-major blocks (so any strides, transposes included, cost one copy, not a
 * strided inner loop), then C is built row by row from an i-k-j loop over column blocks that
 * keep a slab of B hot in cache, accumulating in float64.
 */
const NB = 256; // columns of B per block: 256 f32 × KB rows stay in L2
const KB = 128;

function pack(M: MatRef, rows: number, cols: number, dst: Float32Array): void {
  const { data, off, rs, cs } = M;
  let o = 0;
  for (let i = 0; i < rows; i++) {
    let p = off + i * rs;
    for (let j = 0; j < cols; j++, p += cs) dst[o++] = data[p];
  }
}

export function gemmJs(
  Am: MatRef,
  Bm: MatRef,
  m: number,
  n: number,
  k: number,
  out: Float32Array,
  outOff: number,
): void {
  const A = new Float32Array(m * k);
  const B = new Float32Array(k * n);
  const acc = new Float64Array(Math.min(n, NB));
  pack(Am, m, k, A);
  pack(Bm, k, n, B);
  for (let j0 = 0; j0 < n; j0 += NB) {
    const jn = Math.min(NB, n - j0);
    for (let i = 0; i < m; i++) {
      acc.fill(0, 0, jn);
      const aRow = i * k;
      for (let k0 = 0; k0 < k; k0 += KB) {
        const kn = Math.min(k0 + KB, k);
        for (let p = k0; p < kn; p++) {
          const x = A[aRow + p];
          const bRow = p * n + j0;
          for (let j = 0; j < jn; j++) acc[j] += x * B[bRow + j];
        }
      }
      const cRow = outOff + i * n + j0;
      for (let j = 0; j < jn; j++) out[cRow + j] = acc[j];
    }
  }
}
