import type { DType } from '../dtype';
import type { Expr } from '../expr';
import { RefArray, flatOf, forEachIndex, refBroadcastShape, refExpand, refSize, wrapI32 } from './reference';

/**
 * Scalar semantics of the expression language, written out from the spec (not from the CPU
 * kernel): float math is IEEE f32 (every node rounds to f32), int32 wraps, int division
 * truncates with x/0 = 0, casts truncate and saturate, NaN casts to int 0 and to bool true,
 * max propagates NaN, comparisons with NaN are false, pow is JS Math.pow.
 */
function dtypeOf(e: Expr, inputs: readonly DType[]): DType {
  switch (e.kind) {
    case 'input': return inputs[e.index];
    case 'const': return e.dtype;
    case 'cast': return e.dtype;
    case 'unary': return dtypeOf(e.a, inputs);
    case 'binary': return e.op === 'eq' || e.op === 'lt' ? 'bool' : dtypeOf(e.a, inputs);
    case 'where': return dtypeOf(e.a, inputs);
  }
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

function imul(a: number, b: number): number {
  return Number(BigInt.asIntN(32, BigInt(a) * BigInt(b)));
}

function evalAt(e: Expr, inputs: readonly DType[], vals: readonly number[]): number {
  switch (e.kind) {
    case 'input': return vals[e.index];
    case 'const': return refCast(e.value, e.dtype);
    case 'cast': return refCast(evalAt(e.a, inputs, vals), e.dtype);
    case 'where': return evalAt(e.c, inputs, vals) !== 0 ? evalAt(e.a, inputs, vals) : evalAt(e.b, inputs, vals);
    case 'unary': {
      const a = evalAt(e.a, inputs, vals);
      const isInt = dtypeOf(e.a, inputs) === 'int32';
      switch (e.op) {
        case 'neg': return isInt ? wrapI32(-a) : -a;
        case 'exp': return Math.fround(Math.exp(a));
        case 'log': return Math.fround(Math.log(a));
        case 'sqrt': return Math.fround(Math.sqrt(a));
        case 'recip': return Math.fround(1 / a);
        case 'sin': return Math.fround(Math.sin(a));
      }
      break;
    }
    case 'binary': {
      const a = evalAt(e.a, inputs, vals);
      const b = evalAt(e.b, inputs, vals);
      const isInt = dtypeOf(e.a, inputs) === 'int32';
      switch (e.op) {
        case 'add': return isInt ? wrapI32(a + b) : Math.fround(a + b);
        case 'sub': return isInt ? wrapI32(a - b) : Math.fround(a - b);
        case 'mul': return isInt ? imul(a, b) : Math.fround(a * b);
        case 'div': return isInt ? (b === 0 ? 0 : wrapI32(Math.trunc(a / b))) : Math.fround(a / b);
        case 'pow': return Math.fround(Math.pow(a, b));
        case 'max': return Number.isNaN(a) || Number.isNaN(b) ? NaN : a > b ? a : b;
        case 'eq': return a === b ? 1 : 0;
        case 'lt': return a < b ? 1 : 0;
      }
      break;
    }
  }
  throw new Error(`refExpr: unknown node ${JSON.stringify(e)}`);
}

/** Evaluates each expression at every index of the broadcast shape of the inputs. */
export function refElementwise(outs: readonly Expr[], inputs: readonly RefArray[], shape?: readonly number[]): RefArray[] {
  const sh = shape ?? refBroadcastShape(...inputs.map((x) => x.shape));
  const xs = inputs.map((x) => refExpand(x, sh));
  const dts = inputs.map((x) => x.dtype);
  const vals = new Array<number>(xs.length);
  return outs.map((e) => {
    const data = new Float64Array(refSize(sh));
    forEachIndex(sh, (idx) => {
      const f = flatOf(sh, idx);
      for (let i = 0; i < xs.length; i++) vals[i] = xs[i].data[f];
      data[f] = evalAt(e, dts, vals);
    });
    return { shape: sh.slice(), dtype: dtypeOf(e, dts), data };
  });
}
