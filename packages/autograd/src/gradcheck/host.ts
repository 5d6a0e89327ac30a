/**
 * Tiny float64 reference implementations on the host, written independently of the
 * backends, for the suite's forward checks. Row-major flat data plus a shape.
 */
export interface Host {
  data: number[];
  shape: number[];
}

export function strides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

export function size(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Element at a multi-index (extra leading index dims and size-1 dims broadcast). */
export function at(x: Host, idx: readonly number[]): number {
  const lead = idx.length - x.shape.length;
  const st = strides(x.shape);
  let o = 0;
  x.shape.forEach((d, i) => {
    o += (d === 1 ? 0 : idx[lead + i]) * st[i];
  });
  return x.data[o];
}

/** A tensor whose element at each index is f(index). */
export function build(shape: readonly number[], f: (idx: number[]) => number): Host {
  const n = size(shape);
  const data = new Array<number>(n);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    data[i] = f(idx);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return { data, shape: shape.slice() };
}

export function broadcastShape(...shapes: (readonly number[])[]): number[] {
  const n = Math.max(...shapes.map((s) => s.length));
  return Array.from({ length: n }, (_, i) => Math.max(...shapes.map((s) => s[s.length - n + i] ?? 1)));
}

export function zip(xs: Host[], f: (...v: number[]) => number): Host {
  const shape = broadcastShape(...xs.map((x) => x.shape));
  return build(shape, (idx) => f(...xs.map((x) => at(x, idx))));
}

export const map = (x: Host, f: (v: number) => number): Host => zip([x], f);

/** Reduces one axis (kept as size 1 when keepdim). */
export function reduceAxis(x: Host, axis: number, f: (vals: number[]) => number, keepdim = false): Host {
  const ax = axis < 0 ? axis + x.shape.length : axis;
  const kept = x.shape.map((d, i) => (i === ax ? 1 : d));
  const r = build(kept, (idx) =>
    f(
      Array.from({ length: x.shape[ax] }, (_, k) =>
        at(
          x,
          idx.map((v, i) => (i === ax ? k : v)),
        ),
      ),
    ),
  );
  return keepdim ? r : { data: r.data, shape: x.shape.filter((_, i) => i !== ax) };
}

export function matmul2d(a: Host, b: Host): Host {
  const [m, k] = a.shape;
  const n = b.shape[1];
  return build([m, n], ([i, j]) => {
    let s = 0;
    for (let p = 0; p < k; p++) s += a.data[i * k + p] * b.data[p * n + j];
    return s;
  });
}

export const sumAll = (v: number[]) => v.reduce((a, b) => a + b, 0);
export const logSumExp = (v: number[]) => {
  const m = Math.max(...v);
  return m + Math.log(sumAll(v.map((x) => Math.exp(x - m))));
};
