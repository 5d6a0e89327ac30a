import type { DType } from '../dtype';
import { Expr, exprDType } from '../expr';
import { BINARY_TABLE, UNARY_TABLE } from '../ops/table';
import { foldExpr } from '../ops/visit';
import { RefArray, flatOf, forEachIndex, refBroadcastShape, refExpand, refSize } from './reference';

/**
 * Scalar semantics of the expression language: each op's reference function from the op
 * table (ops/table.ts, written from the spec, not from any kernel), casts as below (truncate,
 * saturate, NaN to int 0 and to bool true), every float node rounded to f32.
 */
function dtypeOf(e: Expr, inputs: readonly DType[]): DType {
  return exprDType(e, inputs, 'refElementwise');
}

/** What a dtype stores for a JS number (constants and cast results). */
export function refCast(v: number, to: DType): number {
  if (to === 'bool') return v !== 0 ? 1 : 0; // NaN !== 0: true
  if (to === 'float32') return Math.fround(v);
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v) + 0; // + 0 turns -0 into 0
}

type Eval = (vals: readonly number[]) => number;

/** Compiles the tree once into a closure over one element's input values. */
function compileRef(e: Expr, inputs: readonly DType[]): Eval {
  return foldExpr<Eval>(e, inputs, {
    input: (i) => (vals) => vals[i],
    const: (value, dtype) => {
      const v = refCast(value, dtype);
      return () => v;
    },
    cast: (a, _, to) => (vals) => refCast(a(vals), to),
    unary: (op, a, dt) => {
      const f = UNARY_TABLE[op].ref;
      return (vals) => f([a(vals)], dt);
    },
    binary: (op, a, b, dt) => {
      const f = BINARY_TABLE[op].ref;
      return (vals) => f([a(vals), b(vals)], dt);
    },
    where: (c, a, b) => (vals) => (c(vals) !== 0 ? a(vals) : b(vals)),
  }).value;
}

/** Evaluates each expression at every index of the broadcast shape of the inputs. */
export function refElementwise(
  outs: readonly Expr[],
  inputs: readonly RefArray[],
  shape?: readonly number[],
): RefArray[] {
  const sh = shape ?? refBroadcastShape(...inputs.map((x) => x.shape));
  const xs = inputs.map((x) => refExpand(x, sh));
  const dts = inputs.map((x) => x.dtype);
  const vals = new Array<number>(xs.length);
  return outs.map((e) => {
    const f = compileRef(e, dts);
    const data = new Float64Array(refSize(sh));
    forEachIndex(sh, (idx) => {
      const flat = flatOf(sh, idx);
      for (let i = 0; i < xs.length; i++) vals[i] = xs[i].data[flat];
      data[flat] = f(vals);
    });
    return { shape: sh.slice(), dtype: dtypeOf(e, dts), data };
  });
}
