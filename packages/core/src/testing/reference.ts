import type { DType } from '../dtype';

/**
 * The independent reference: dense row-major float64 arrays and naive ops written with
 * explicit multi-index loops. It deliberately shares no code with View, the CPU kernels or
 * shape.ts, so a bug there cannot hide in the expected values.
 */
export interface RefArray {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly data: Float64Array;
}

export function refSize(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function refArray(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'float32'): RefArray {
  if (data.length !== refSize(shape)) throw new Error(`refArray: ${data.length} values for shape [${shape.join(',')}]`);
  return { shape: shape.slice(), dtype, data: Float64Array.from(data, Number) };
}

/** Calls fn for every multi-index of shape in row-major order with its flat position. */
export function forEachIndex(shape: readonly number[], fn: (idx: number[], flat: number) => void): void {
  const n = refSize(shape);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < n; flat++) {
    fn(idx, flat);
    for (let d = shape.length - 1; d >= 0; d--) {
      idx[d]++;
      if (idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

/** Row-major flat position of a multi-index. */
export function flatOf(shape: readonly number[], idx: readonly number[]): number {
  let f = 0;
  for (let d = 0; d < shape.length; d++) f = f * shape[d] + idx[d];
  return f;
}

function build(shape: readonly number[], dtype: DType, at: (idx: number[]) => number): RefArray {
  const data = new Float64Array(refSize(shape));
  forEachIndex(shape, (idx, flat) => {
    data[flat] = at(idx);
  });
  return { shape: shape.slice(), dtype, data };
}

export function refPermute(x: RefArray, order: readonly number[]): RefArray {
  const shape = order.map((a) => x.shape[a]);
  const src = new Array<number>(x.shape.length);
  return build(shape, x.dtype, (idx) => {
    for (let d = 0; d < order.length; d++) src[order[d]] = idx[d];
    return x.data[flatOf(x.shape, src)];
  });
}

/** NumPy broadcast of x to shape (new leading dims, size-1 dims repeated). */
export function refExpand(x: RefArray, shape: readonly number[]): RefArray {
  const lead = shape.length - x.shape.length;
  const src = new Array<number>(x.shape.length);
  return build(shape, x.dtype, (idx) => {
    for (let d = 0; d < x.shape.length; d++) src[d] = x.shape[d] === 1 ? 0 : idx[d + lead];
    return x.data[flatOf(x.shape, src)];
  });
}

export function refCrop(x: RefArray, ranges: readonly (readonly [number, number])[]): RefArray {
  const shape = ranges.map(([b, e]) => e - b);
  const src = new Array<number>(x.shape.length);
  return build(shape, x.dtype, (idx) => {
    for (let d = 0; d < shape.length; d++) src[d] = idx[d] + ranges[d][0];
    return x.data[flatOf(x.shape, src)];
  });
}

export function refPad(x: RefArray, widths: readonly (readonly [number, number])[]): RefArray {
  const shape = x.shape.map((n, d) => n + widths[d][0] + widths[d][1]);
  const src = new Array<number>(x.shape.length);
  return build(shape, x.dtype, (idx) => {
    for (let d = 0; d < shape.length; d++) {
      src[d] = idx[d] - widths[d][0];
      if (src[d] < 0 || src[d] >= x.shape[d]) return 0;
    }
    return x.data[flatOf(x.shape, src)];
  });
}

export function refFlip(x: RefArray, axes: readonly number[]): RefArray {
  const src = new Array<number>(x.shape.length);
  return build(x.shape, x.dtype, (idx) => {
    for (let d = 0; d < idx.length; d++) src[d] = axes.includes(d) ? x.shape[d] - 1 - idx[d] : idx[d];
    return x.data[flatOf(x.shape, src)];
  });
}

export function refReshape(x: RefArray, shape: readonly number[]): RefArray {
  if (refSize(shape) !== x.data.length) throw new Error('refReshape: size mismatch');
  return { shape: shape.slice(), dtype: x.dtype, data: x.data.slice() };
}

export function refBroadcastShape(...shapes: (readonly number[])[]): number[] {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let j = 0; j < n; j++) {
    let d = 1;
    for (const s of shapes) {
      const v = s[s.length - n + j] ?? 1;
      if (v !== 1) d = v;
    }
    out.push(d);
  }
  return out;
}

export interface RefReduced {
  /** Keepdim result. */
  out: RefArray;
  /** Σ|x| per output element: the scale a sum's rounding error is relative to. */
  mag: Float64Array;
}

/** Sum or max over axes with keepdim; float32 sums are rounded once at the end, int32 wraps. */
export function refReduce(op: 'sum' | 'max', x: RefArray, axes: readonly number[]): RefReduced {
  const shape = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const n = refSize(shape);
  const empty = x.dtype === 'int32' ? -2147483648 : -Infinity;
  const acc = new Float64Array(n).fill(op === 'sum' ? 0 : empty);
  const mag = new Float64Array(n);
  const o = new Array<number>(shape.length);
  forEachIndex(x.shape, (idx, flat) => {
    for (let d = 0; d < idx.length; d++) o[d] = axes.includes(d) ? 0 : idx[d];
    const f = flatOf(shape, o);
    const v = x.data[flat];
    mag[f] += Math.abs(v);
    if (op === 'sum') acc[f] += v;
    else if (Number.isNaN(v) || Number.isNaN(acc[f])) acc[f] = NaN;
    else if (v > acc[f]) acc[f] = v;
  });
  const data = acc.map((v) => (x.dtype === 'int32' ? wrapI32(v) : Math.fround(v)));
  return { out: { shape, dtype: x.dtype, data }, mag };
}

export interface RefMatmul {
  out: RefArray;
  /** Σ|a·b| per output element. */
  mag: Float64Array;
}

/** [...batch, m, k] @ [...batch, k, n] with NumPy-broadcast batch dims, accumulated in float64. */
export function refMatmul(a: RefArray, b: RefArray): RefMatmul {
  const m = a.shape[a.shape.length - 2],
    k = a.shape[a.shape.length - 1];
  const n = b.shape[b.shape.length - 1];
  const batch = refBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const A = refExpand(a, [...batch, m, k]);
  const B = refExpand(b, [...batch, k, n]);
  const shape = [...batch, m, n];
  const mag = new Float64Array(refSize(shape));
  const out = build(shape, 'float32', (idx) => {
    const bi = idx.slice(0, -2);
    const i = idx[idx.length - 2],
      j = idx[idx.length - 1];
    let s = 0,
      g = 0;
    for (let p = 0; p < k; p++) {
      const t = A.data[flatOf(A.shape, [...bi, i, p])] * B.data[flatOf(B.shape, [...bi, p, j])];
      s += t;
      g += Math.abs(t);
    }
    mag[flatOf(shape, idx)] = g;
    return Math.fround(s);
  });
  return { out, mag };
}

/** Slices of x along axis picked by idx; out-of-range indices give zeros. */
export function refGather(x: RefArray, axis: number, idx: readonly number[]): RefArray {
  const shape = x.shape.slice();
  shape[axis] = idx.length;
  const src = new Array<number>(x.shape.length);
  return build(shape, x.dtype, (at) => {
    for (let d = 0; d < at.length; d++) src[d] = at[d];
    const r = idx[at[axis]];
    if (!(r >= 0 && r < x.shape[axis])) return 0;
    src[axis] = r;
    return x.data[flatOf(x.shape, src)];
  });
}

/** Two's-complement wrap of an exact integer (a double up to 2^53) to int32. */
export function wrapI32(v: number): number {
  const m = ((v % 4294967296) + 4294967296) % 4294967296;
  return m >= 2147483648 ? m - 4294967296 : m;
}
