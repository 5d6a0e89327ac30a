import { DType, E, Expr } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { Operand, X, fused } from './fuse';
import { checkScalar, scalarDType } from '../dtypes';

/**
 * torch.logical_and / or / xor / not: every dtype, non-zero counts as true (NaN too), bool
 * result, one fused kernel, broadcasting; a number operand works too. No gradient.
 */
const truthy = (v: Expr, dt: DType): Expr =>
  dt === 'bool' ? E.eq(E.cast(v, 'int32'), E.i(1)) : X.not(E.eq(v, E.c(0, dt)));
const dtypeOf = (op: string, x: Operand): DType => (x instanceof Tensor ? x.dtype : scalarDType(checkScalar(op, x)));

function logical(op: string, a: Tensor, b: Operand, f: (p: Expr, q: Expr) => Expr): Tensor {
  checkTensor(op, a, 'input');
  const da = a.dtype;
  const db = dtypeOf(op, b);
  return fused(op, [a, b], [da, db], { fwd: ([x, y]) => f(truthy(x, da), truthy(y, db)) });
}

export const logicalAnd = (a: Tensor, b: Operand): Tensor => logical('logicalAnd', a, b, X.and);
export const logicalOr = (a: Tensor, b: Operand): Tensor => logical('logicalOr', a, b, X.or);
export const logicalXor = (a: Tensor, b: Operand): Tensor =>
  logical('logicalXor', a, b, (p, q) => X.not(E.eq(E.cast(p, 'int32'), E.cast(q, 'int32'))));

export function logicalNot(a: Tensor): Tensor {
  checkTensor('logicalNot', a, 'input');
  const da = a.dtype;
  return fused('logicalNot', [a], [da], { fwd: ([x]) => X.not(truthy(x, da)) });
}
