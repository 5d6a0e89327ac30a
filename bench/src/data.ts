/**
 * Inputs every framework receives bit for bit (PyTorch included: bench/torch/bench.py computes
 * the same hash), and the float64 references the results are checked against.
 *
 * Element i of stream `seed` is a 32-bit integer hash of (i, seed) mapped to [0, 1): positive
 * values keep sums and dot products well conditioned, so a plain relative error means
 * something (an f32 result off by more than ~1e-4 is a wrong kernel, not rounding).
 */

/** The hash: a murmur3-style finaliser of i * golden + seed * prime (all mod 2^32). */
export function hashUnit(i: number, seed: number): number {
  let h = (Math.imul(i, 0x9e3779b1) + Math.imul(seed, 0x85ebca77)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 8) / 16777216;
}

/** n values in [0, 1) of stream `seed`. */
export function uniform(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = hashUnit(i, seed);
  return out;
}

/** Labels in [0, classes): floor(u * classes) of stream `seed`. */
export function labels(n: number, classes: number, seed: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(hashUnit(i, seed) * classes);
  return out;
}

/** max |got - want| / max |want| over the checked entries (0 when equal). */
export function relErr(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let err = 0;
  let mag = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= err)) err = Number.isNaN(d) ? Infinity : Math.max(err, d);
    mag = Math.max(mag, Math.abs(want[i]));
  }
  return mag > 0 ? err / mag : err;
}

/** A matmul row: C[m,n] = A[m,k] @ B[k,n]; `ta`: A is stored as [k,m] and read transposed, `tb` likewise. */
export interface MatmulSpec {
  m: number;
  k: number;
  n: number;
  ta: boolean;
  tb: boolean;
}

export const SEED_A = 1;
export const SEED_B = 2;
export const SEED_C = 3;

/** The entries of C checked (deterministic): 256 of them spread over the matrix, corners included. */
export function matmulSamples(m: number, n: number): [number, number][] {
  const out: [number, number][] = [[0, 0], [m - 1, n - 1], [0, n - 1], [m - 1, 0]];
  for (let s = 0; out.length < Math.min(256, m * n); s++) {
    out.push([Math.floor(hashUnit(s, 101) * m), Math.floor(hashUnit(s, 102) * n)]);
  }
  return out;
}

/** float64 values of C at the sampled entries, from the stored (possibly transposed) inputs. */
export function matmulReference(spec: MatmulSpec, a: Float32Array, b: Float32Array, samples: [number, number][]): Float64Array {
  const { m, k, n, ta, tb } = spec;
  const out = new Float64Array(samples.length);
  samples.forEach(([i, j], s) => {
    let acc = 0;
    for (let p = 0; p < k; p++) {
      const av = ta ? a[p * m + i] : a[i * k + p];
      const bv = tb ? b[j * k + p] : b[p * n + j];
      acc += av * bv;
    }
    out[s] = acc;
  });
  return out;
}

export function pick(c: ArrayLike<number>, n: number, samples: [number, number][]): Float64Array {
  return Float64Array.from(samples, ([i, j]) => c[i * n + j]);
}

/** Sums of a [rows, cols] matrix: over everything (axis null), rows (axis 0) or columns (axis 1). */
export function sumReference(x: Float32Array, rows: number, cols: number, axis: 0 | 1 | null): Float64Array {
  if (axis === null) {
    let acc = 0;
    for (let i = 0; i < x.length; i++) acc += x[i];
    return Float64Array.of(acc);
  }
  if (axis === 1) {
    const out = new Float64Array(rows);
    for (let r = 0; r < rows; r++) {
      let acc = 0;
      for (let c = 0, o = r * cols; c < cols; c++) acc += x[o + c];
      out[r] = acc;
    }
    return out;
  }
  const out = new Float64Array(cols);
  for (let r = 0; r < rows; r++) for (let c = 0, o = r * cols; c < cols; c++) out[c] += x[o + c];
  return out;
}

/** a*b+c where a is read transposed (stored [cols, rows]) when `permuted`. */
export function fmaReference(a: Float32Array, b: Float32Array, c: Float32Array, rows: number, cols: number, permuted: boolean): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let q = 0; q < cols; q++) {
      const i = r * cols + q;
      const av = permuted ? a[q * rows + r] : a[i];
      out[i] = av * b[i] + c[i];
    }
  }
  return out;
}

/**
 * The synthetic classification task of the training rows (MNIST-shaped: 784 features, 10
 * classes). Features are hashes in [0, 1) minus 0.5 (centred, so plain SGD at lr 0.1 is stable
 * however long it runs); labels are the argmax of a fixed random linear teacher applied to the
 * features, so the loss can fall and a broken training step shows. `batches` distinct batches
 * are cycled.
 */
export interface TrainData {
  features: number;
  classes: number;
  batch: number;
  /** [batches][batch * features] */
  x: Float32Array[];
  /** [batches][batch] */
  y: Int32Array[];
  /** [batches][batch * classes] one-hot, for frameworks whose loss takes one-hot targets. */
  yOneHot: Float32Array[];
}

export function trainData(features: number, classes: number, batch: number, batches: number): TrainData {
  const teacher = uniform(features * classes, 7).map((v) => v - 0.5);
  const x: Float32Array[] = [];
  const y: Int32Array[] = [];
  const yOneHot: Float32Array[] = [];
  for (let b = 0; b < batches; b++) {
    const xs = uniform(batch * features, 1000 + b).map((v) => v - 0.5);
    const ys = new Int32Array(batch);
    const oh = new Float32Array(batch * classes);
    for (let r = 0; r < batch; r++) {
      let best = 0;
      let bestV = -Infinity;
      for (let c = 0; c < classes; c++) {
        let acc = 0;
        for (let f = 0; f < features; f++) acc += xs[r * features + f] * teacher[f * classes + c];
        if (acc > bestV) { bestV = acc; best = c; }
      }
      ys[r] = best;
      oh[r * classes + best] = 1;
    }
    x.push(xs);
    y.push(ys);
    yOneHot.push(oh);
  }
  return { features, classes, batch, x, y, yOneHot };
}
