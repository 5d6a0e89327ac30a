import { View } from '../view';

/**
 * Cache-blocked f32 matmul. Each batch's operands are first packed into contiguous row-major
 * blocks (so any strides, transposes included, cost one copy, not a strided inner loop), then
 * C is built row by row from an i-k-j loop over column blocks that keep a slab of B hot in
 * cache, accumulating in float64 rows.
 */
const NB = 256; // columns of B per block: 256 f32 × KB rows stay in L2
const KB = 128;

function pack(src: Float32Array, view: View, batchBase: number, rows: number, cols: number, rs: number, cs: number, dst: Float32Array): void {
  let o = 0;
  for (let i = 0; i < rows; i++) {
    let p = batchBase + i * rs;
    for (let j = 0; j < cols; j++, p += cs) dst[o++] = src[p];
  }
}

export function matmulInto(a: Float32Array, av: View, b: Float32Array, bv: View, out: Float32Array): void {
  const nd = av.ndim;
  const m = av.shape[nd - 2], k = av.shape[nd - 1], n = bv.shape[nd - 1];
  const batchShape = av.shape.slice(0, -2);
  const batches = batchShape.reduce((x, y) => x * y, 1);
  const A = new Float32Array(m * k);
  const B = new Float32Array(k * n);
  const acc = new Float64Array(Math.min(n, NB));
  const bIdx = new Int32Array(batchShape.length);
  for (let bt = 0; bt < batches; bt++) {
    let ab = av.offset, bb = bv.offset;
    for (let d = 0; d < batchShape.length; d++) { ab += bIdx[d] * av.strides[d]; bb += bIdx[d] * bv.strides[d]; }
    pack(a, av, ab, m, k, av.strides[nd - 2], av.strides[nd - 1], A);
    pack(b, bv, bb, k, n, bv.strides[nd - 2], bv.strides[nd - 1], B);
    const cBase = bt * m * n;
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
        const cRow = cBase + i * n + j0;
        for (let j = 0; j < jn; j++) out[cRow + j] = acc[j];
      }
    }
    for (let d = batchShape.length - 1; d >= 0; d--) { if (++bIdx[d] < batchShape[d]) break; bIdx[d] = 0; }
  }
}
