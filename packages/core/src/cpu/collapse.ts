import { collapseDims as collapseShared } from '../ops/lower';

/**
 * Dimension collapsing for unmasked operands, keeping at least one dim: the shared routine
 * (ops/lower.ts) in the shape the CPU's reduce/copy helpers and their tests use.
 */
export function collapseDims(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const c = collapseShared(
    shape,
    strides.map((s) => ({ strides: s, mask: null })),
  );
  if (c.shape.length === 0) return { shape: [1], strides: strides.map(() => [0]) };
  return { shape: c.shape, strides: c.ops.map((o) => o.strides) };
}
