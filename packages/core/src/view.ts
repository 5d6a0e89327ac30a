import { ShapeError, ValueError, fmtShape } from './errors';
import { Shape, contiguousStrides, numel, shapesEqual } from './shape';

/**
 * A strided view of a flat buffer (tinygrad's ShapeTracker, one view deep). Element `i`
 * (a multi-index) lives at `offset + Σ i[d]·strides[d]`, unless a mask is set and `i[d]`
 * falls outside `mask[d] = [lo, hi)` for some d: then the element reads as 0. The mask is how
 * `pad` stays a view; stride 0 is how `expand` does; a negative stride is how `flip` does.
 * Every movement op returns a new View, or `null` when strides cannot express the result
 * (the caller then copies to a contiguous buffer and retries).
 */
export class View {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly mask: readonly (readonly [number, number])[] | null;

  constructor(shape: Shape, strides: Shape, offset = 0, mask: readonly (readonly [number, number])[] | null = null) {
    this.shape = shape.slice();
    this.strides = strides.slice();
    this.offset = offset;
    // A mask that covers everything is no mask: keep the fast paths reachable.
    this.mask =
      mask && mask.some(([lo, hi], d) => lo > 0 || hi < shape[d]) ? mask.map(([a, b]) => [a, b] as const) : null;
  }

  static contiguous(shape: Shape): View {
    return new View(shape, contiguousStrides(shape), 0, null);
  }

  get ndim(): number {
    return this.shape.length;
  }
  get size(): number {
    return numel(this.shape);
  }

  /** True when the view reads buffer[offset .. offset+size) in row-major order (no mask). */
  get isContiguous(): boolean {
    if (this.mask) return false;
    const cs = contiguousStrides(this.shape);
    return this.shape.every((d, i) => d === 1 || this.strides[i] === cs[i]);
  }

  /** True when the view is exactly a fresh contiguous buffer of its size (offset 0). */
  get isPlain(): boolean {
    return this.isContiguous && this.offset === 0;
  }

  /** Buffer index of a multi-index, or -1 where the mask hides it. */
  indexOf(idx: readonly number[]): number {
    let o = this.offset;
    for (let d = 0; d < idx.length; d++) {
      if (this.mask && (idx[d] < this.mask[d][0] || idx[d] >= this.mask[d][1])) return -1;
      o += idx[d] * this.strides[d];
    }
    return o;
  }

  permute(order: readonly number[]): View {
    const n = this.ndim;
    if (
      order.length !== n ||
      new Set(order).size !== n ||
      !order.every((a) => Number.isInteger(a) && a >= 0 && a < n)
    ) {
      throw new ShapeError(
        `permute: order ${JSON.stringify(order)} is not a permutation of 0..${n - 1} for shape ${fmtShape(this.shape)}`,
      );
    }
    return new View(
      order.map((a) => this.shape[a]),
      order.map((a) => this.strides[a]),
      this.offset,
      this.mask && order.map((a) => this.mask![a]),
    );
  }

  /** Broadcast to `shape`: only size-1 dims grow (stride 0); new leading dims are added. */
  expand(shape: Shape, op = 'expand'): View {
    if (shape.length < this.ndim) {
      throw new ShapeError(`${op}: cannot expand shape ${fmtShape(this.shape)} to fewer dims ${fmtShape(shape)}`);
    }
    const lead = shape.length - this.ndim;
    const strides: number[] = [];
    const mask: [number, number][] = [];
    for (let i = 0; i < shape.length; i++) {
      const to = shape[i];
      if (i < lead) {
        strides.push(0);
        mask.push([0, to]);
        continue;
      }
      const from = this.shape[i - lead];
      const m = this.mask ? this.mask[i - lead] : [0, from];
      if (from === to) {
        strides.push(this.strides[i - lead]);
        mask.push([m[0], m[1]]);
      } else if (from === 1) {
        strides.push(0);
        mask.push(m[1] > m[0] ? [0, to] : [0, 0]);
      } else
        throw new ShapeError(
          `${op}: cannot expand shape ${fmtShape(this.shape)} to ${fmtShape(shape)} (dim ${i} is ${from}; only size-1 dims can grow)`,
        );
    }
    return new View(shape, strides, this.offset, this.mask ? mask : null);
  }

  /** Keeps [begin, end) of each dim (a slice without step). */
  crop(ranges: readonly (readonly [number, number])[]): View {
    if (
      !isPairs(ranges) ||
      ranges.length !== this.ndim ||
      !ranges.every(([b, e], d) => Number.isInteger(b) && Number.isInteger(e) && 0 <= b && b <= e && e <= this.shape[d])
    ) {
      throw new ShapeError(
        `crop: ranges ${JSON.stringify(ranges)} do not fit shape ${fmtShape(this.shape)} (expected 0 <= begin <= end <= size for each dim)`,
      );
    }
    let offset = this.offset;
    ranges.forEach(([b], d) => {
      offset += b * this.strides[d];
    });
    const shape = ranges.map(([b, e]) => e - b);
    const mask =
      this.mask &&
      this.mask.map(([lo, hi], d) => {
        const [b] = ranges[d];
        const l = Math.min(Math.max(lo - b, 0), shape[d]);
        return [l, Math.max(l, Math.min(hi - b, shape[d]))] as [number, number];
      });
    // An empty crop has no element to read; keep the offset sane for kernels.
    return new View(shape, this.strides, numel(shape) === 0 ? 0 : offset, mask);
  }

  /** Adds `before`/`after` zeros on each dim: a mask, no copy. */
  pad(widths: readonly (readonly [number, number])[]): View {
    if (
      !isPairs(widths) ||
      widths.length !== this.ndim ||
      !widths.every(([a, b]) => Number.isInteger(a) && Number.isInteger(b) && a >= 0 && b >= 0)
    ) {
      throw new ValueError(
        `pad: widths ${JSON.stringify(widths)} do not fit shape ${fmtShape(this.shape)} (expected ${this.ndim} pairs of non-negative integers)`,
      );
    }
    const shape = this.shape.map((d, i) => d + widths[i][0] + widths[i][1]);
    let offset = this.offset;
    widths.forEach(([a], d) => {
      offset -= a * this.strides[d];
    });
    const mask = this.shape.map((d, i) => {
      const [lo, hi] = this.mask ? this.mask[i] : [0, d];
      return [lo + widths[i][0], hi + widths[i][0]] as [number, number];
    });
    return new View(shape, this.strides, offset, mask);
  }

  flip(axes: readonly number[]): View {
    if (
      !Array.isArray(axes) ||
      new Set(axes).size !== axes.length ||
      !axes.every((a) => Number.isInteger(a) && a >= 0 && a < this.ndim)
    ) {
      throw new ShapeError(
        `flip: axes ${JSON.stringify(axes)} do not fit shape ${fmtShape(this.shape)} (expected unique axes in 0..${this.ndim - 1})`,
      );
    }
    const strides = this.strides.slice();
    let offset = this.offset;
    const mask = this.mask ? this.mask.map((m) => [m[0], m[1]] as [number, number]) : null;
    for (const a of axes) {
      const n = this.shape[a];
      if (n === 0) continue;
      offset += (n - 1) * strides[a];
      strides[a] = -strides[a];
      if (mask) mask[a] = [n - mask[a][1], n - mask[a][0]];
    }
    return new View(this.shape, strides, offset, mask);
  }

  /**
   * Reshape without copying when the strides allow it (NumPy's no-copy reshape: each run of
   * merged dims must be contiguous in memory). Returns null when a copy is needed.
   */
  reshape(shape: Shape): View | null {
    if (numel(shape) !== this.size) {
      throw new ShapeError(
        `reshape: cannot reshape ${fmtShape(this.shape)} (${this.size} elements) to ${fmtShape(shape)} (${numel(shape)} elements)`,
      );
    }
    if (shapesEqual(shape, this.shape)) return this;
    if (this.size === 0) return View.contiguous(shape);
    if (this.isContiguous) return new View(shape, contiguousStrides(shape), this.offset);
    if (this.mask) return null;
    // Drop size-1 dims; they carry no stride information.
    const oldShape: number[] = [];
    const oldStrides: number[] = [];
    this.shape.forEach((d, i) => {
      if (d !== 1) {
        oldShape.push(d);
        oldStrides.push(this.strides[i]);
      }
    });
    const newStrides = new Array<number>(shape.length).fill(0);
    let oi = 0;
    let ni = 0;
    while (ni < shape.length && oi < oldShape.length) {
      let np = shape[ni];
      let op = oldShape[oi];
      const nStart = ni;
      const oStart = oi;
      while (np !== op) {
        if (np < op) np *= shape[++ni];
        else op *= oldShape[++oi];
      }
      for (let k = oStart; k < oi; k++) {
        if (oldStrides[k] !== oldShape[k + 1] * oldStrides[k + 1]) return null;
      }
      newStrides[ni] = oldStrides[oi];
      for (let k = ni; k > nStart; k--) newStrides[k - 1] = newStrides[k] * shape[k];
      ni++;
      oi++;
    }
    // Trailing size-1 dims of the new shape take any stride.
    for (; ni < shape.length; ni++) newStrides[ni] = 1;
    return new View(shape, newStrides, this.offset);
  }

  toString(): string {
    return `View(shape=${fmtShape(this.shape)}, strides=${fmtShape(this.strides)}, offset=${this.offset}${this.mask ? `, mask=${JSON.stringify(this.mask)}` : ''})`;
  }
}

/** An array of [a, b] pairs (user input to crop/pad is checked before it is destructured). */
function isPairs(x: unknown): x is readonly (readonly [number, number])[] {
  return Array.isArray(x) && x.every((p) => Array.isArray(p) && p.length === 2);
}
