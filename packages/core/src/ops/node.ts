import type { DType } from '../dtype';
import type { BinaryOp, UnaryOp } from './table';

/**
 * The expression language's nodes and builders. They live apart from the op table (which
 * names the ops and writes derivatives with these builders) so neither module needs the
 * other at load time.
 */
export type Expr =
  | { readonly kind: 'input'; readonly index: number }
  | { readonly kind: 'const'; readonly value: number; readonly dtype: DType }
  | { readonly kind: 'unary'; readonly op: UnaryOp; readonly a: Expr }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly a: Expr; readonly b: Expr }
  | { readonly kind: 'where'; readonly c: Expr; readonly a: Expr; readonly b: Expr }
  | { readonly kind: 'cast'; readonly dtype: DType; readonly a: Expr };

const un =
  (op: UnaryOp) =>
  (a: Expr): Expr => ({ kind: 'unary', op, a });
const bin =
  (op: BinaryOp) =>
  (a: Expr, b: Expr): Expr => ({ kind: 'binary', op, a, b });

/** Builders, so composite ops read like arithmetic: E.add(E.in(0), E.f(1)). */
export const E = {
  in: (index: number): Expr => ({ kind: 'input', index }),
  f: (value: number): Expr => ({ kind: 'const', value, dtype: 'float32' }),
  i: (value: number): Expr => ({ kind: 'const', value, dtype: 'int32' }),
  c: (value: number, dtype: DType): Expr => ({ kind: 'const', value, dtype }),
  un: (op: UnaryOp, a: Expr): Expr => ({ kind: 'unary', op, a }),
  bin: (op: BinaryOp, a: Expr, b: Expr): Expr => ({ kind: 'binary', op, a, b }),
  neg: un('neg'),
  exp: un('exp'),
  log: un('log'),
  sqrt: un('sqrt'),
  recip: un('recip'),
  sin: un('sin'),
  cos: un('cos'),
  tanh: un('tanh'),
  erf: un('erf'),
  floor: un('floor'),
  ceil: un('ceil'),
  round: un('round'),
  trunc: un('trunc'),
  log1p: un('log1p'),
  expm1: un('expm1'),
  abs: un('abs'),
  sign: un('sign'),
  add: bin('add'),
  sub: bin('sub'),
  mul: bin('mul'),
  div: bin('div'),
  pow: bin('pow'),
  max: bin('max'),
  min: bin('min'),
  mod: bin('mod'),
  eq: bin('eq'),
  lt: bin('lt'),
  and: bin('and'),
  or: bin('or'),
  xor: bin('xor'),
  where: (c: Expr, a: Expr, b: Expr): Expr => ({ kind: 'where', c, a, b }),
  cast: (a: Expr, dtype: DType): Expr => ({ kind: 'cast', dtype, a }),
};
