import type { GradcheckCase } from '../case';
import { map } from '../host';
import { InputSpec } from '../inputs';

/**
 * Copies and same-dtype casts: each passes the gradient through unchanged. Multiplied by the
 * input itself (y = copy(x)·x, dy/dx = 2x), so a copy that dropped or doubled its gradient, or
 * lost the input's layout, shows up against the reference.
 */
export function copyCases(): GradcheckCase[] {
  const c = (op: string, fn: GradcheckCase['fn'], spec: InputSpec): GradcheckCase => ({
    name: `${op} ${spec.layout ?? 'contiguous'}`,
    op,
    inputs: [spec],
    fn,
    forward: (x) => map(x, (v) => v * v),
  });
  return [
    c('clone', (x) => x.clone().mul(x), { shape: [2, 3], layout: 'sliced' }),
    c('contiguous', (x) => x.contiguous().mul(x), { shape: [3, 4], layout: 'transposed' }),
    c('cast', (x) => x.cast('float32').mul(x), { shape: [2, 3], layout: 'flipped' }),
    c('float', (x) => x.float().mul(x), { shape: [4] }),
  ];
}
