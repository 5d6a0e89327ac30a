import { DType, DTypeError, E, Expr, ValueError, assertDType } from '@surf/core';
import { requireNumeric } from '../dtypes';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { Operand, Rule, X, computeDType, fused, tableRule } from './fuse';

/** Binary arithmetic, comparisons, where, clamp and cast, each one fused kernel. */

function binary(op: string, a: Tensor, b: Operand, rule: Rule, float = false): Tensor {
  const dt = computeDType(op, [a, b], float);
  return fused(op, [a, b], [dt, dt], rule);
}

// Forward nodes and derivatives from the op table (core ops/table.ts).
export const add = (a: Tensor, b: Operand) => binary('add', a, b, tableRule('add'));
export const sub = (a: Tensor, b: Operand) => binary('sub', a, b, tableRule('sub'));
export const mul = (a: Tensor, b: Operand) => binary('mul', a, b, tableRule('mul'));
export const div = (a: Tensor, b: Operand) => binary('div', a, b, tableRule('div'), true);
/** JS Math.pow semantics (negative bases with integer exponents work); see the table's pow row. */
export const pow = (a: Tensor, b: Operand) => binary('pow', a, b, tableRule('pow'), true);

/** Ties (a = b) split the gradient equally, so maximum(x, x) has gradient 1 in x; NaN propagates. */
function extremum(op: 'maximum' | 'minimum', a: Tensor, b: Operand): Tensor {
  const dt = requireNumeric(op, computeDType(op, [a, b]));
  return fused(op, [a, b], [dt, dt], tableRule(op === 'maximum' ? 'max' : 'min'));
}
export const maximum = (a: Tensor, b: Operand) => extremum('maximum', a, b);
export const minimum = (a: Tensor, b: Operand) => extremum('minimum', a, b);

/**
 * PyTorch's remainder (Python's %): a - floor(a / b)·b, so the result takes the divisor's
 * sign. float x mod 0 is NaN; int32 x mod 0 is 0 (as int32 x / 0 is 0 here; PyTorch raises).
 */
export function remainder(a: Tensor, b: Operand): Tensor {
  const dt = requireNumeric('remainder', computeDType('remainder', [a, b]));
  return fused('remainder', [a, b], [dt, dt], tableRule('mod'));
}

/**
 * min(max(x, lo), hi) with NaN propagated. The gradient passes where lo <= x <= hi (bounds
 * included, as PyTorch) and goes to a tensor bound where x is outside it.
 */
export function clamp(x: Tensor, lo?: Operand, hi?: Operand): Tensor {
  if (lo === undefined && hi === undefined) throw new ValueError('clamp: expected at least one of min and max');
  const xs: Operand[] = [x, lo ?? 0, hi ?? 0];
  const dt = computeDType(
    'clamp',
    xs.filter((_, i) => i === 0 || xs[i] !== undefined),
  );
  const hasLo = lo !== undefined,
    hasHi = hi !== undefined;
  const isNan = (v: Expr) => X.not(E.eq(v, v));
  return fused('clamp', xs, [dt, dt, dt], {
    fwd: ([v, l, h]) => {
      let r = v;
      if (hasLo) r = E.where(E.lt(r, l), l, r);
      if (hasHi) r = E.where(E.lt(h, r), h, r);
      return dt === 'float32' ? E.where(isNan(v), v, r) : r;
    },
    grad: (g, [v, l, h]) => {
      const below = hasLo ? E.lt(v, l) : null;
      const above = hasHi ? E.lt(h, v) : null;
      let inside: Expr = E.eq(v, v);
      if (below) inside = X.and(inside, X.not(below));
      if (above) inside = X.and(inside, X.not(above));
      return [
        E.where(inside, g, X.zero),
        below ? E.where(below, g, X.zero) : null,
        above ? E.where(X.and(above, below ? X.not(below) : E.eq(v, v)), g, X.zero) : null,
      ];
    },
  });
}

function compare(op: string, a: Tensor, b: Operand, f: (x: Expr, y: Expr) => Expr): Tensor {
  let dt = computeDType(op, [a, b]);
  // Order comparisons on bools compare 0/1 as integers.
  if (dt === 'bool' && op !== 'eq' && op !== 'ne') dt = 'int32';
  return fused(op, [a, b], [dt, dt], { fwd: ([x, y]) => f(x, y) });
}
export const eq = (a: Tensor, b: Operand) => compare('eq', a, b, E.eq);
export const ne = (a: Tensor, b: Operand) => compare('ne', a, b, (x, y) => X.not(E.eq(x, y)));
export const lt = (a: Tensor, b: Operand) => compare('lt', a, b, E.lt);
export const gt = (a: Tensor, b: Operand) => compare('gt', a, b, (x, y) => E.lt(y, x));
export const le = (a: Tensor, b: Operand) => compare('le', a, b, (x, y) => X.or(E.lt(x, y), E.eq(x, y)));
export const ge = (a: Tensor, b: Operand) => compare('ge', a, b, (x, y) => X.or(E.lt(y, x), E.eq(x, y)));

/** c ? a : b, broadcasting all three; the gradient goes to the branch that was taken. */
export function where(c: Tensor, a: Operand, b: Operand): Tensor {
  checkTensor('where', c, 'the condition');
  if (c.dtype !== 'bool')
    throw new DTypeError(`where: condition has dtype ${c.dtype}; expected bool (compare first, e.g. x.gt(0))`);
  const dt = computeDType('where', [a, b]);
  return fused('where', [c, a, b], ['bool', dt, dt], {
    fwd: ([k, x, y]) => E.where(k, x, y),
    grad: (g, [k]) => [null, E.where(k, g, X.zero), E.where(k, X.zero, g)],
  });
}

/** Converts dtype. Only float32 -> float32 carries a gradient (it is then a no-op alias). */
export function cast(x: Tensor, dtype: DType): Tensor {
  assertDType('cast', dtype);
  const nd = x.nd('cast');
  if (nd.dtype === dtype) return fromOp('cast', alias(nd), [x], (g) => [alias(g)]);
  return new Tensor(nd.cast(dtype));
}
