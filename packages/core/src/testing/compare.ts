/**
 * Element-wise comparison with a per-case tolerance. An element passes when
 * |got - want| <= atol + rtol * max(|want|, mag), where `mag` (optional, per element) is the
 * magnitude of the terms that produced it (Σ|a·b| for matmul, Σ|x| for sum): a GPU that
 * accumulates in f32 in another order is wrong by a multiple of that, not of |want|, which
 * can cancel to ~0. NaN and ±Infinity must match exactly; -0 equals +0.
 */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

export const EXACT: Tolerance = { rtol: 0, atol: 0 };

/** Tolerances the cases use, named so a reader sees why each is what it is. */
export const TOL = {
  exact: EXACT,
  /** One f32 op (WGSL allows a few ULP for div/sqrt/exp). */
  f32: { rtol: 1e-5, atol: 0 } as Tolerance,
  /** log near 1 and sin have absolute, not relative, error bounds in WGSL. */
  transcendental: { rtol: 1e-5, atol: 1e-5 } as Tolerance,
  /** Deep fused expressions: errors of many nodes add up. */
  fused: { rtol: 1e-4, atol: 1e-6 } as Tolerance,
  /** Reductions and matmul, relative to `mag` (the sum of the terms' magnitudes). */
  accumulate: { rtol: 1e-5, atol: 1e-6 } as Tolerance,
};

export interface Mismatch {
  /** Flat row-major index. */
  index: number;
  /** The same index per dim (when a shape was given). */
  at: number[];
  got: number;
  want: number;
  /** |got - want| (Infinity for a NaN/Inf mismatch). */
  err: number;
  /** What the tolerance allowed there. */
  allowed: number;
}

export interface Comparison {
  ok: boolean;
  /** Number of elements outside tolerance. */
  bad: number;
  /** The element with the largest err/allowed ratio among the bad ones (or overall when ok). */
  worst: Mismatch | null;
  message: string;
}

function unflat(i: number, shape: readonly number[] | undefined): number[] {
  if (!shape) return [i];
  const at = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    at[d] = shape[d] === 0 ? 0 : i % shape[d];
    i = shape[d] === 0 ? 0 : Math.floor(i / shape[d]);
  }
  return at;
}

export interface CompareOptions {
  tol?: Tolerance;
  shape?: readonly number[];
  mag?: ArrayLike<number>;
  label?: string;
}

export function compare(got: ArrayLike<number>, want: ArrayLike<number>, opts: CompareOptions = {}): Comparison {
  const tol = opts.tol ?? EXACT;
  const label = opts.label ? `${opts.label}: ` : '';
  if (got.length !== want.length) {
    return {
      ok: false,
      bad: Math.max(got.length, want.length),
      worst: null,
      message: `${label}got ${got.length} elements, expected ${want.length}`,
    };
  }
  let bad = 0;
  let worst: Mismatch | null = null;
  let worstRatio = -1;
  for (let i = 0; i < got.length; i++) {
    const g = Number(got[i]);
    const w = Number(want[i]);
    let err: number;
    let allowed: number;
    let ratio: number;
    if (Number.isNaN(w) || Number.isNaN(g) || !Number.isFinite(w) || !Number.isFinite(g)) {
      const same = (Number.isNaN(w) && Number.isNaN(g)) || g === w;
      err = same ? 0 : Infinity;
      allowed = 0;
      ratio = same ? 0 : Infinity;
    } else {
      err = Math.abs(g - w);
      const scale = Math.max(Math.abs(w), opts.mag ? Math.abs(Number(opts.mag[i])) : 0);
      allowed = tol.atol + tol.rtol * scale;
      ratio = err === 0 ? 0 : allowed === 0 ? Infinity : err / allowed;
    }
    const fails = ratio > 1;
    if (fails) bad++;
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worst = { index: i, at: unflat(i, opts.shape), got: g, want: w, err, allowed };
    }
  }
  const ok = bad === 0;
  const where = worst
    ? `at [${worst.at.join(',')}] got ${worst.got}, want ${worst.want} (|err| ${worst.err.toPrecision(3)}, allowed ${worst.allowed.toPrecision(3)})`
    : '';
  const message = ok
    ? `${label}ok (${got.length} elements${worst && worst.err > 0 ? `, worst ${where}` : ''})`
    : `${label}${bad} of ${got.length} elements outside rtol=${tol.rtol} atol=${tol.atol}; worst ${where}`;
  return { ok, bad, worst, message };
}

export function allclose(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  tol: Tolerance = EXACT,
  mag?: ArrayLike<number>,
): boolean {
  return compare(got, want, { tol, mag }).ok;
}
