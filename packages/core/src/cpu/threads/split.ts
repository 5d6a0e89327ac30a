/**
 * How work is cut between threads. Every cut is along an axis whose elements are computed
 * independently (matmul rows or columns of C, never k; elementwise rows), and each element
 * is computed by the same instructions in the same order whatever the cut, so results are
 * bit-identical for any thread count.
 */

/** `units` split into at most `parts` contiguous [start, end) ranges, sizes differing by ≤ 1. */
export function splitRange(units: number, parts: number): [number, number][] {
  const p = Math.max(1, Math.min(parts, units));
  const out: [number, number][] = [];
  for (let i = 0, s = 0; i < p; i++) {
    const e = s + Math.floor(units / p) + (i < units % p ? 1 : 0);
    out.push([s, e]);
    s = e;
  }
  return out;
}

/** A block of C: rows [r0, r1), columns [c0, c1). */
export interface GemmPart {
  r0: number;
  r1: number;
  c0: number;
  c1: number;
}

/**
 * Cuts an m × n product into at most `parts` column blocks (whole panels of `nr` columns) or,
 * when there are fewer panels than parts, row blocks (multiples of `mr` rows) if those balance
 * better. Columns first: the kernel walks panels outermost and streams A for each panel, so a
 * column cut re-reads nothing extra, while a row cut makes every chunk stream all of B again
 * (an L2-bandwidth-bound chunk for the MLP's 784 × 128 weight).
 */
export function planGemm(m: number, n: number, mr: number, nr: number, parts: number): GemmPart[] {
  const rowUnits = Math.ceil(m / mr),
    colUnits = Math.ceil(n / nr);
  const largest = (units: number) => Math.ceil(units / Math.min(parts, units)) / units;
  if (colUnits >= parts || largest(colUnits) <= largest(rowUnits)) {
    return splitRange(colUnits, parts).map(([s, e]) => ({ r0: 0, r1: m, c0: s * nr, c1: Math.min(n, e * nr) }));
  }
  return splitRange(rowUnits, parts).map(([s, e]) => ({ r0: s * mr, r1: Math.min(m, e * mr), c0: 0, c1: n }));
}
