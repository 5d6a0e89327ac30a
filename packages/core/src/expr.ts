import { DType, assertDType } from './dtype';
import { DTypeError, ValueError } from './errors';

/**
 * The elementwise half of the raw-op contract is one small expression language: a backend
 * receives a tree over its inputs and compiles it into one kernel (WGSL on the GPU, a JS
 * function on the CPU). A single raw op is the one-node case; a composite like the Adam
 * update is a bigger tree that still costs one pass over memory.
 */
export const UNARY_OPS = ['neg', 'exp', 'log', 'sqrt', 'recip', 'sin'] as const;
export const BINARY_OPS = ['add', 'sub', 'mul', 'div', 'pow', 'max', 'eq', 'lt'] as const;
export type UnaryOp = (typeof UNARY_OPS)[number];
export type BinaryOp = (typeof BINARY_OPS)[number];

export type Expr =
  | { readonly kind: 'input'; readonly index: number }
  | { readonly kind: 'const'; readonly value: number; readonly dtype: DType }
  | { readonly kind: 'unary'; readonly op: UnaryOp; readonly a: Expr }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly a: Expr; readonly b: Expr }
  | { readonly kind: 'where'; readonly c: Expr; readonly a: Expr; readonly b: Expr }
  | { readonly kind: 'cast'; readonly dtype: DType; readonly a: Expr };

/** Builders, so composite ops read like arithmetic: E.add(E.in(0), E.f(1)). */
export const E = {
  in: (index: number): Expr => ({ kind: 'input', index }),
  f: (value: number): Expr => ({ kind: 'const', value, dtype: 'float32' }),
  i: (value: number): Expr => ({ kind: 'const', value, dtype: 'int32' }),
  c: (value: number, dtype: DType): Expr => ({ kind: 'const', value, dtype }),
  un: (op: UnaryOp, a: Expr): Expr => ({ kind: 'unary', op, a }),
  bin: (op: BinaryOp, a: Expr, b: Expr): Expr => ({ kind: 'binary', op, a, b }),
  neg: (a: Expr): Expr => E.un('neg', a),
  exp: (a: Expr): Expr => E.un('exp', a),
  log: (a: Expr): Expr => E.un('log', a),
  sqrt: (a: Expr): Expr => E.un('sqrt', a),
  recip: (a: Expr): Expr => E.un('recip', a),
  sin: (a: Expr): Expr => E.un('sin', a),
  add: (a: Expr, b: Expr): Expr => E.bin('add', a, b),
  sub: (a: Expr, b: Expr): Expr => E.bin('sub', a, b),
  mul: (a: Expr, b: Expr): Expr => E.bin('mul', a, b),
  div: (a: Expr, b: Expr): Expr => E.bin('div', a, b),
  pow: (a: Expr, b: Expr): Expr => E.bin('pow', a, b),
  max: (a: Expr, b: Expr): Expr => E.bin('max', a, b),
  eq: (a: Expr, b: Expr): Expr => E.bin('eq', a, b),
  lt: (a: Expr, b: Expr): Expr => E.bin('lt', a, b),
  where: (c: Expr, a: Expr, b: Expr): Expr => ({ kind: 'where', c, a, b }),
  cast: (a: Expr, dtype: DType): Expr => ({ kind: 'cast', dtype, a }),
};

const FLOAT_ONLY = new Set<string>(['exp', 'log', 'sqrt', 'recip', 'sin', 'pow']);

/** The dtype an expression produces, checking every node's operand dtypes on the way. */
export function exprDType(e: Expr, inputs: readonly DType[], op = 'elementwise'): DType {
  // Expressions come from user code too: a malformed node must not compile to NaN.
  if (e === null || typeof e !== 'object') throw new ValueError(`${op}: expression node ${String(e)} is not an object; expected an Expr (build it with E)`);
  switch (e.kind) {
    case 'input':
      if (!(Number.isInteger(e.index) && e.index >= 0 && e.index < inputs.length)) throw new DTypeError(`${op}: expression reads input ${e.index} but only ${inputs.length} inputs were given`);
      return inputs[e.index];
    case 'const':
      if (typeof e.value !== 'number') throw new ValueError(`${op}: const value ${JSON.stringify(e.value)}; expected a number`);
      return assertDType(`${op}: const`, e.dtype);
    case 'cast': exprDType(e.a, inputs, op); return assertDType(`${op}: cast`, e.dtype);
    case 'unary': {
      if (!(UNARY_OPS as readonly string[]).includes(e.op)) throw new ValueError(`${op}: unknown unary op '${e.op}'; expected one of ${UNARY_OPS.join(', ')}`);
      const a = exprDType(e.a, inputs, op);
      if (a === 'bool') throw new DTypeError(`${e.op}: got dtype bool; expected float32${FLOAT_ONLY.has(e.op) ? '' : ' or int32'} (cast first)`);
      if (a === 'int32' && FLOAT_ONLY.has(e.op)) throw new DTypeError(`${e.op}: got dtype int32; expected float32 (cast first)`);
      return a;
    }
    case 'binary': {
      if (!(BINARY_OPS as readonly string[]).includes(e.op)) throw new ValueError(`${op}: unknown binary op '${e.op}'; expected one of ${BINARY_OPS.join(', ')}`);
      const a = exprDType(e.a, inputs, op);
      const b = exprDType(e.b, inputs, op);
      if (a !== b) throw new DTypeError(`${e.op}: operand dtypes differ: ${a} and ${b}; expected the same dtype (cast one)`);
      if (e.op === 'eq') return 'bool';
      if (a === 'bool') throw new DTypeError(`${e.op}: got dtype bool; expected float32 or int32 (cast first)`);
      if (a === 'int32' && FLOAT_ONLY.has(e.op)) throw new DTypeError(`${e.op}: got dtype int32; expected float32 (cast first)`);
      return e.op === 'lt' ? 'bool' : a;
    }
    case 'where': {
      const c = exprDType(e.c, inputs, op);
      const a = exprDType(e.a, inputs, op);
      const b = exprDType(e.b, inputs, op);
      if (c !== 'bool') throw new DTypeError(`where: condition has dtype ${c}; expected bool`);
      if (a !== b) throw new DTypeError(`where: branch dtypes differ: ${a} and ${b}; expected the same dtype`);
      return a;
    }
    default:
      throw new ValueError(`${op}: unknown expression node ${JSON.stringify(e)}; expected kind input, const, unary, binary, where or cast`);
  }
}

/**
 * A cache key that names the expression's structure and the dtypes of its inputs but not
 * its constants' values: those travel as kernel parameters, so a learning rate that changes
 * every step does not compile a new kernel every step. `consts` gets the values in order.
 */
export function exprKey(e: Expr, consts: { value: number; dtype: DType }[] = []): string {
  switch (e.kind) {
    case 'input': return `i${e.index}`;
    case 'const': consts.push({ value: e.value, dtype: e.dtype }); return `c${e.dtype[0]}${consts.length - 1}`;
    case 'cast': return `cast_${e.dtype}(${exprKey(e.a, consts)})`;
    case 'unary': return `${e.op}(${exprKey(e.a, consts)})`;
    case 'binary': return `${e.op}(${exprKey(e.a, consts)},${exprKey(e.b, consts)})`;
    case 'where': return `where(${exprKey(e.c, consts)},${exprKey(e.a, consts)},${exprKey(e.b, consts)})`;
  }
}

/** Which inputs an expression reads. */
export function exprInputs(e: Expr, out = new Set<number>()): Set<number> {
  switch (e.kind) {
    case 'input': out.add(e.index); break;
    case 'const': break;
    case 'cast': case 'unary': exprInputs(e.a, out); break;
    case 'binary': exprInputs(e.a, out); exprInputs(e.b, out); break;
    case 'where': exprInputs(e.c, out); exprInputs(e.a, out); exprInputs(e.b, out); break;
  }
  return out;
}
