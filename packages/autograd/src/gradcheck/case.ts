import type { Tensor } from '../tensor';
import { type Host, map } from './host';
import type { InputSpec } from './inputs';

/**
 * The gradient-check cases: every differentiable op of the Tensor API, on small shapes,
 * with broadcasting and non-contiguous operands, plus composite graphs. `forward` (when
 * given) is an independent float64 host reference of the output; `expected` holds numbers
 * worked out by hand.
 */
export interface GradcheckCase {
  name: string;
  /** The Tensor API op under test (the table's first column). */
  op: string;
  inputs: InputSpec[];
  fn: (...xs: Tensor[]) => Tensor;
  forward?: (...xs: Host[]) => Host;
  expected?: { output: number[]; grads: (number[] | null)[] };
  /** Finite-difference settings when the defaults do not fit (e.g. log near 0). */
  eps?: number;
  atol?: number;
  rtol?: number;
  /** Cross-backend tolerance override (transcendentals on GPUs). */
  refAtol?: number;
}

/** A one-input case whose reference applies `f` to every element (named by op and layout). */
export const unaryCase = (
  op: string,
  fn: (x: Tensor) => Tensor,
  f: (v: number) => number,
  spec: InputSpec,
  extra: Partial<GradcheckCase> = {},
): GradcheckCase => ({
  name: `${op} ${spec.layout ?? 'contiguous'}`,
  op,
  inputs: [spec],
  fn,
  forward: (x) => map(x, f),
  ...extra,
});
