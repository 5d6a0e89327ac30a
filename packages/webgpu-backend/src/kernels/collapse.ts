/**
 * Dimension collapsing: fewer dims mean fewer divisions per element in a kernel and fewer
 * distinct pipelines (they are specialised by rank). Size-1 dims are dropped, and adjacent
 * dims merge when every operand walks them as one run (stride[d] = stride[d+1]·shape[d+1])
 * and no operand's mask cuts them.
 */
export interface Operand {
  strides: number[];
  /** [lo, hi) per dim, or null for no mask. */
  mask: [number, number][] | null;
}

export interface Collapsed {
  shape: number[];
  ops: Operand[];
}

export function collapse(shape: readonly number[], ops: readonly Operand[]): Collapsed {
  const keep = shape.map((_, d) => d).filter((d) => shape[d] !== 1);
  let sh = keep.map((d) => shape[d]);
  let os = ops.map((o) => ({ strides: keep.map((d) => o.strides[d]), mask: o.mask && keep.map((d) => o.mask![d]) }));
  const fullOn = (o: Operand, d: number) => !o.mask || (o.mask[d][0] <= 0 && o.mask[d][1] >= sh[d]);
  for (let d = sh.length - 2; d >= 0; d--) {
    const ok = os.every((o) => o.strides[d] === o.strides[d + 1] * sh[d + 1] && fullOn(o, d) && fullOn(o, d + 1));
    if (!ok) continue;
    const merged = sh[d] * sh[d + 1];
    sh = [...sh.slice(0, d), merged, ...sh.slice(d + 2)];
    os = os.map((o) => ({
      strides: [...o.strides.slice(0, d), o.strides[d + 1], ...o.strides.slice(d + 2)],
      mask: o.mask && [...o.mask.slice(0, d), [0, merged] as [number, number], ...o.mask.slice(d + 2)],
    }));
  }
  return { shape: sh, ops: os };
}

/** Row-major decomposition of a linear index `v` (a u32 WGSL expression) into digits. */
export function decompose(v: string, shape: readonly string[], prefix: string): string {
  const lines: string[] = [];
  const n = shape.length;
  if (n === 0) return '';
  lines.push(`var ${prefix}r = ${v};`);
  for (let d = n - 1; d > 0; d--) {
    lines.push(`let ${prefix}${d} = ${prefix}r % ${shape[d]}; ${prefix}r = ${prefix}r / ${shape[d]};`);
  }
  lines.push(`let ${prefix}0 = ${prefix}r;`);
  return lines.join('\n  ');
}
