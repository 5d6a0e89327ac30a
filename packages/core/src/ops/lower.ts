/**
 * The one lowering of strided views to index math, shared by the CPU (JS and wasm) and WGSL
 * elementwise generators. First the dims are collapsed: size-1 dims dropped and adjacent
 * dims merged where every operand walks them as one run (stride[d] = stride[d+1]·shape[d+1],
 * which also holds for two broadcast dims of stride 0) and no mask cuts them, so contiguous
 * work is one flat loop and a bias add over [64, 128] stays two dims. Then each operand gets
 * the cheapest way to read it:
 *   c  contiguous: element i of the output is element offset + i
 *   b  broadcast scalar (every stride 0)
 *   s  strided: offset + Σ digit[d]·stride[d] (negative strides are flips, 0 is broadcast)
 *   m  strided and masked: outside [lo, hi) on any dim reads 0 (pad)
 *   z  masked away entirely: the constant 0
 * and `inner`, how it steps along the last dim: 'u' unit stride, '0' stride 0, 'g' other.
 */
export type Mask = readonly (readonly [number, number])[];

export interface Operand {
  readonly strides: readonly number[];
  /** [lo, hi) per dim, or null for no mask. */
  readonly mask: Mask | null;
}

export interface Collapsed {
  shape: number[];
  ops: { strides: number[]; mask: [number, number][] | null }[];
}

export function collapseDims(shape: readonly number[], ops: readonly Operand[]): Collapsed {
  const keep = shape.map((_, d) => d).filter((d) => shape[d] !== 1);
  const sh = keep.map((d) => shape[d]);
  const os = ops.map((o) => ({
    strides: keep.map((d) => o.strides[d]),
    mask: o.mask && keep.map((d) => [o.mask![d][0], o.mask![d][1]] as [number, number]),
  }));
  const fullOn = (o: Collapsed['ops'][number], d: number) => !o.mask || (o.mask[d][0] <= 0 && o.mask[d][1] >= sh[d]);
  for (let d = sh.length - 2; d >= 0; d--) {
    if (!os.every((o) => o.strides[d] === o.strides[d + 1] * sh[d + 1] && fullOn(o, d) && fullOn(o, d + 1))) continue;
    sh.splice(d, 2, sh[d] * sh[d + 1]);
    for (const o of os) {
      o.strides.splice(d, 1);
      if (o.mask) o.mask.splice(d, 2, [0, sh[d]]);
    }
  }
  // A size-1 dim whose mask is empty (a pad of a size-0 slice) is dropped above but masks the
  // operand away entirely: say so on the dims that remain.
  ops.forEach((o, i) => {
    if (isEmpty(o)) os[i].mask = sh.map(() => [0, 0]);
  });
  return { shape: sh, ops: os };
}

const isEmpty = (o: Operand) => o.mask !== null && o.mask.some(([lo, hi]) => hi <= lo);

export type Access = 'c' | 'b' | 's' | 'm' | 'z';
export type InnerStep = 'u' | '0' | 'g';

export interface LoweredOperand {
  access: Access;
  inner: InnerStep;
  strides: number[];
  /** Only for access 'm' and 'z'; a mask that cuts nothing is dropped. */
  mask: [number, number][] | null;
}

export interface Lowered {
  shape: number[];
  ops: LoweredOperand[];
}

/**
 * Collapses and classifies. With `minRank` 1 a fully collapsed shape is [1] (strides 0)
 * rather than [], for generators that always loop over at least one dim.
 */
export function lowerViews(shape: readonly number[], ops: readonly Operand[], minRank: 0 | 1 = 0): Lowered {
  const c = collapseDims(shape, ops);
  if (c.shape.length < minRank) {
    c.shape.push(1);
    c.ops.forEach((o, i) => {
      o.strides.push(0);
      if (o.mask) o.mask.push(isEmpty(ops[i]) ? [0, 0] : [0, 1]);
    });
  }
  const rank = c.shape.length;
  const dense: number[] = [];
  for (let d = rank - 1, acc = 1; d >= 0; d--) {
    dense[d] = acc;
    acc *= c.shape[d];
  }
  return {
    shape: c.shape,
    ops: c.ops.map((o, i): LoweredOperand => {
      let access: Access;
      let mask = o.mask;
      if (isEmpty(ops[i])) access = 'z';
      else if (mask && mask.some(([lo, hi], d) => lo > 0 || hi < c.shape[d])) access = 'm';
      else {
        mask = null;
        access = o.strides.every((s) => s === 0)
          ? 'b'
          : o.strides.every((s, d) => s === dense[d] || c.shape[d] === 1)
            ? 'c'
            : 's';
      }
      const last = o.strides[rank - 1];
      const inner: InnerStep = mask || rank === 0 ? 'g' : last === 1 ? 'u' : last === 0 ? '0' : 'g';
      return { access, inner, strides: o.strides, mask };
    }),
  };
}
