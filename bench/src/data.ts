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
  const out: [number, number][] = [
    [0, 0],
    [m - 1, n - 1],
    [0, n - 1],
    [m - 1, 0],
  ];
  for (let s = 0; out.length < Math.min(256, m * n); s++) {
    out.push([Math.floor(hashUnit(s, 101) * m), Math.floor(hashUnit(s, 102) * n)]);
  }
  return out;
}

/** float64 values of C at the sampled entries, from the stored (possibly transposed) inputs. */
export function matmulReference(
  spec: MatmulSpec,
  a: Float32Array,
  b: Float32Array,
  samples: [number, number][],
): Float64Array {
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
export function fmaReference(
  a: Float32Array,
  b: Float32Array,
  c: Float32Array,
  rows: number,
  cols: number,
  permuted: boolean,
): Float64Array {
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
        if (acc > bestV) {
          bestV = acc;
          best = c;
        }
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

/**
 * The GPT row's token batches (bench/torch/bench.py makes the same): windows of T+1 ids of a
 * noisy rule, id' = (7·id + 3 + n) mod vocab with n in {0, 1, 2} from the hash, so a model can
 * learn it (the loss falls from ln(vocab) towards ln 3) and a broken training step shows.
 * Batch b, window r, position j uses hash stream 2000 + b at index r·(T+1) + j.
 */
export interface TokenData {
  /** [batches][batch * T] inputs and next-token targets. */
  x: Int32Array[];
  y: Int32Array[];
}

export function tokenData(vocab: number, batch: number, T: number, batches: number): TokenData {
  const x: Int32Array[] = [];
  const y: Int32Array[] = [];
  for (let b = 0; b < batches; b++) {
    const xs = new Int32Array(batch * T);
    const ys = new Int32Array(batch * T);
    for (let r = 0; r < batch; r++) {
      let id = Math.floor(hashUnit(r * (T + 1), 2000 + b) * vocab);
      for (let j = 1; j <= T; j++) {
        const next = (7 * id + 3 + Math.floor(3 * hashUnit(r * (T + 1) + j, 2000 + b))) % vocab;
        xs[r * T + j - 1] = id;
        ys[r * T + j - 1] = next;
        id = next;
      }
    }
    x.push(xs);
    y.push(ys);
  }
  return { x, y };
}

/** Attention inputs: q, k, v and the output gradient, uniform in [-0.5, 0.5) (streams 1-4). */
export function attentionInputs(n: number): { q: Float32Array; k: Float32Array; v: Float32Array; g: Float32Array } {
  const centred = (seed: number) => uniform(n, seed).map((u) => u - 0.5);
  return { q: centred(SEED_A), k: centred(SEED_B), v: centred(SEED_C), g: centred(4) };
}

/**
 * Reference attention output (float64) for query rows `rows` ([b·heads + h, i] pairs flattened
 * as bh·L + i) of q, k, v stored [BH, L, E], causal or not.
 */
export function attentionReference(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  L: number,
  E: number,
  causal: boolean,
  rows: number[],
): Float64Array {
  const out = new Float64Array(rows.length * E);
  const scale = 1 / Math.sqrt(E);
  const s = new Float64Array(L);
  rows.forEach((row, n) => {
    const bh = Math.floor(row / L);
    const i = row % L;
    const last = causal ? i : L - 1;
    let max = -Infinity;
    for (let j = 0; j <= last; j++) {
      let acc = 0;
      for (let e = 0; e < E; e++) acc += q[row * E + e] * k[(bh * L + j) * E + e];
      s[j] = acc * scale;
      if (s[j] > max) max = s[j];
    }
    let den = 0;
    for (let j = 0; j <= last; j++) den += s[j] = Math.exp(s[j] - max);
    for (let j = 0; j <= last; j++) {
      const p = s[j] / den;
      for (let e = 0; e < E; e++) out[n * E + e] += p * v[(bh * L + j) * E + e];
    }
  });
  return out;
}

/** Sampled outputs [n, o, y, x] of a stride-1 conv2d (no bias) in float64, x [N, C, S, S], w [O, C, k, k]. */
export function conv2dReference(
  x: Float32Array,
  w: Float32Array,
  C: number,
  S: number,
  O: number,
  k: number,
  pad: number,
  samples: [number, number, number, number][],
): Float64Array {
  return Float64Array.from(samples, ([n, o, oy, ox]) => {
    let acc = 0;
    for (let c = 0; c < C; c++) {
      for (let i = 0; i < k; i++) {
        const iy = oy + i - pad;
        if (iy < 0 || iy >= S) continue;
        for (let j = 0; j < k; j++) {
          const ix = ox + j - pad;
          if (ix < 0 || ix >= S) continue;
          acc += x[((n * C + c) * S + iy) * S + ix] * w[((o * C + c) * k + i) * k + j];
        }
      }
    }
    return acc;
  });
}

/** Sampled outputs [n, c, y, x] of maxPool2d (window k, stride k) in float64. */
export function maxPoolReference(
  x: Float32Array,
  C: number,
  S: number,
  k: number,
  samples: [number, number, number, number][],
): Float64Array {
  return Float64Array.from(samples, ([n, c, oy, ox]) => {
    let m = -Infinity;
    for (let i = 0; i < k; i++)
      for (let j = 0; j < k; j++) m = Math.max(m, x[((n * C + c) * S + oy * k + i) * S + ox * k + j]);
    return m;
  });
}

/**
 * A conv row's inputs, NCHW / OIHW: x and the output gradient g centred hashes, the weight
 * scaled by 1/√(C·k²) (bench.py makes the same). `out` is the output side, `outC` its channels.
 */
export function convInputs(
  r: { op: string; batch: number; channels: number; size: number; outChannels: number; kernel: number },
  out: number,
): { x: Float32Array; w: Float32Array; g: Float32Array; outC: number } {
  const { batch: N, channels: C, size: S, outChannels: O, kernel: k } = r;
  const centred = (n: number, seed: number, scale = 1) => uniform(n, seed).map((u) => (u - 0.5) * scale);
  const outC = r.op === 'conv2d' ? O : C;
  return {
    x: centred(N * C * S * S, SEED_A),
    w: centred(O * C * k * k, SEED_B, 1 / Math.sqrt(C * k * k)),
    g: centred(N * outC * out * out, 4),
    outC,
  };
}

/** The sampled output positions [n, c, y, x] the conv rows check. */
export function convSamples(N: number, outC: number, out: number): [number, number, number, number][] {
  const s = Array.from({ length: 64 }, (_, i): [number, number, number, number] => [
    i % N,
    (i * 7) % outC,
    (i * 5) % out,
    (i * 11) % out,
  ]);
  s.push([N - 1, outC - 1, out - 1, out - 1], [0, 0, 0, 0]);
  return s;
}

/** [N, C, H, W] -> [N, H, W, C] (TF.js's layout); with `oihw`, [O, I, kh, kw] -> [kh, kw, I, O]. */
export function toChannelsLast(
  a: Float32Array,
  d0: number,
  d1: number,
  d2: number,
  d3: number,
  oihw = false,
): Float32Array {
  const out = new Float32Array(a.length);
  for (let i0 = 0; i0 < d0; i0++)
    for (let i1 = 0; i1 < d1; i1++)
      for (let i2 = 0; i2 < d2; i2++)
        for (let i3 = 0; i3 < d3; i3++) {
          const v = a[((i0 * d1 + i1) * d2 + i2) * d3 + i3];
          if (oihw) out[((i2 * d3 + i3) * d1 + i1) * d0 + i0] = v;
          else out[((i0 * d2 + i2) * d3 + i3) * d1 + i1] = v;
        }
  return out;
}
