import type { DType } from '../dtype';
import type { Expr } from './node';
import type { BinaryOp, UnaryOp } from './table';

/**
 * The one walk over an expression that every code generator shares: children first, each
 * node handed its operands' results and dtypes, constants numbered in pre-order (the order
 * exprKey numbers them, which is the order backends receive their values). A generator
 * states only what each node becomes; the JS, WGSL and wasm generators, the reference
 * evaluator and exprKey are all folds.
 */
export interface ExprFold<T> {
  input(index: number, dtype: DType): T;
  /** `slot` is the constant's index in pre-order. */
  const(value: number, dtype: DType, slot: number): T;
  cast(a: T, from: DType, to: DType): T;
  unary(op: UnaryOp, a: T, dtype: DType): T;
  /** `dtype` is the operands' dtype (comparisons produce bool). */
  binary(op: BinaryOp, a: T, b: T, dtype: DType): T;
  where(c: T, a: T, b: T, dtype: DType): T;
}

export interface Folded<T> {
  value: T;
  dtype: DType;
}

/**
 * Folds `e`. Dtypes are computed structurally (exprDType has already validated the tree);
 * `counter` carries the constant numbering across several outputs of one kernel.
 */
export function foldExpr<T>(e: Expr, inputs: readonly DType[], f: ExprFold<T>, counter = { next: 0 }): Folded<T> {
  switch (e.kind) {
    case 'input':
      return { value: f.input(e.index, inputs[e.index]), dtype: inputs[e.index] };
    case 'const':
      return { value: f.const(e.value, e.dtype, counter.next++), dtype: e.dtype };
    case 'cast': {
      const a = foldExpr(e.a, inputs, f, counter);
      return { value: f.cast(a.value, a.dtype, e.dtype), dtype: e.dtype };
    }
    case 'unary': {
      const a = foldExpr(e.a, inputs, f, counter);
      return { value: f.unary(e.op, a.value, a.dtype), dtype: a.dtype };
    }
    case 'binary': {
      const a = foldExpr(e.a, inputs, f, counter);
      const b = foldExpr(e.b, inputs, f, counter);
      const cmp = e.op === 'eq' || e.op === 'lt';
      return { value: f.binary(e.op, a.value, b.value, a.dtype), dtype: cmp ? 'bool' : a.dtype };
    }
    case 'where': {
      const c = foldExpr(e.c, inputs, f, counter);
      const a = foldExpr(e.a, inputs, f, counter);
      const b = foldExpr(e.b, inputs, f, counter);
      return { value: f.where(c.value, a.value, b.value, a.dtype), dtype: a.dtype };
    }
  }
}
