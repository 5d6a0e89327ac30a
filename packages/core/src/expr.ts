import { DType, assertDType } from './dtype';
import { DTypeError, ValueError } from './errors';
import { E, Expr } from './ops/node';
import { BINARY_OPS, BINARY_TABLE, BinaryOp, UNARY_OPS, UNARY_TABLE, UnaryOp, acceptedDTypes } from './ops/table';

/**
 * The elementwise half of the raw-op contract is one small expression language: a backend
 * receives a tree over its inputs and compiles it into one kernel (WGSL on the GPU, a JS
 * function on the CPU). A single raw op is the one-node case; a composite like the Adam
 * update is a bigger tree that still costs one pass over memory. The ops themselves are
 * rows of the op table (ops/table.ts).
 */
export { E, UNARY_OPS, BINARY_OPS };
export type { Expr, UnaryOp, BinaryOp };

function checkOperand(op: string, dt: DType, rule: keyof typeof RULE_WORDS): void {
  const ok = acceptedDTypes(rule);
  if (!ok.includes(dt)) throw new DTypeError(`${op}: got dtype ${dt}; expected ${RULE_WORDS[rule]} (cast first)`);
}
const RULE_WORDS = {
  float: 'float32',
  numeric: 'float32 or int32',
  integral: 'int32 or bool',
  any: 'float32, int32 or bool',
} as const;

/**
 * The dtype an expression produces, checking every node's operand dtypes on the way. A tree
 * that checked out is remembered per input-dtype signature (see exprInfo), so an op that
 * reuses its Expr object (and core, then the backend, asking again) walks it once.
 */
export function exprDType(e: Expr, inputs: readonly DType[], op = 'elementwise'): DType {
  const sig = dtypeSig(inputs);
  const known = sig >= 0 && typeof e === 'object' && e !== null ? infos.get(e)?.dtypes?.get(sig) : undefined;
  if (known) return known;
  const dt = checkTree(e, inputs, op);
  if (sig >= 0) {
    const info = exprInfo(e);
    (info.dtypes ??= new Map()).set(sig, dt);
  }
  return dt;
}

/** Input dtypes as one number (a leading 1, then a base-3 digit per input); -1 when too many. */
function dtypeSig(inputs: readonly DType[]): number {
  if (inputs.length > 30) return -1;
  let s = 1;
  for (let i = 0; i < inputs.length; i++) {
    const d = inputs[i];
    s = s * 3 + (d === 'float32' ? 0 : d === 'int32' ? 1 : d === 'bool' ? 2 : NaN);
  }
  return Number.isNaN(s) ? -1 : s;
}

function checkTree(e: Expr, inputs: readonly DType[], op: string): DType {
  // Expressions come from user code too: a malformed node must not compile to NaN.
  if (e === null || typeof e !== 'object')
    throw new ValueError(`${op}: expression node ${String(e)} is not an object; expected an Expr (build it with E)`);
  switch (e.kind) {
    case 'input':
      if (!(Number.isInteger(e.index) && e.index >= 0 && e.index < inputs.length))
        throw new DTypeError(`${op}: expression reads input ${e.index} but only ${inputs.length} inputs were given`);
      return inputs[e.index];
    case 'const':
      if (typeof e.value !== 'number')
        throw new ValueError(`${op}: const value ${JSON.stringify(e.value)}; expected a number`);
      return assertDType(`${op}: const`, e.dtype);
    case 'cast':
      checkTree(e.a, inputs, op);
      return assertDType(`${op}: cast`, e.dtype);
    case 'unary': {
      const row = Object.hasOwn(UNARY_TABLE, e.op) ? UNARY_TABLE[e.op] : undefined;
      if (!row) throw new ValueError(`${op}: unknown unary op '${e.op}'; expected one of ${UNARY_OPS.join(', ')}`);
      const a = checkTree(e.a, inputs, op);
      checkOperand(e.op, a, row.dtypes);
      return a;
    }
    case 'binary': {
      const row = Object.hasOwn(BINARY_TABLE, e.op) ? BINARY_TABLE[e.op] : undefined;
      if (!row) throw new ValueError(`${op}: unknown binary op '${e.op}'; expected one of ${BINARY_OPS.join(', ')}`);
      const a = checkTree(e.a, inputs, op);
      const b = checkTree(e.b, inputs, op);
      if (a !== b)
        throw new DTypeError(`${e.op}: operand dtypes differ: ${a} and ${b}; expected the same dtype (cast one)`);
      checkOperand(e.op, a, row.dtypes);
      return row.result === 'bool' ? 'bool' : a;
    }
    case 'where': {
      const c = checkTree(e.c, inputs, op);
      const a = checkTree(e.a, inputs, op);
      const b = checkTree(e.b, inputs, op);
      if (c !== 'bool') throw new DTypeError(`where: condition has dtype ${c}; expected bool`);
      if (a !== b) throw new DTypeError(`where: branch dtypes differ: ${a} and ${b}; expected the same dtype`);
      return a;
    }
    default:
      throw new ValueError(
        `${op}: unknown expression node ${JSON.stringify(e)}; expected kind input, const, unary, binary, where or cast`,
      );
  }
}

/**
 * A cache key that names the expression's structure and the dtypes of its inputs but not
 * its constants' values: those travel as kernel parameters, so a learning rate that changes
 * every step does not compile a new kernel every step. `consts` gets the values in order.
 */
export function exprKey(e: Expr, consts: { value: number; dtype: DType }[] = []): string {
  switch (e.kind) {
    case 'input':
      return `i${e.index}`;
    case 'const':
      consts.push({ value: e.value, dtype: e.dtype });
      return `c${e.dtype[0]}${consts.length - 1}`;
    case 'cast':
      return `cast_${e.dtype}(${exprKey(e.a, consts)})`;
    case 'unary':
      return `${e.op}(${exprKey(e.a, consts)})`;
    case 'binary':
      return `${e.op}(${exprKey(e.a, consts)},${exprKey(e.b, consts)})`;
    case 'where':
      return `where(${exprKey(e.c, consts)},${exprKey(e.a, consts)},${exprKey(e.b, consts)})`;
  }
}

/** Which inputs an expression reads. */
export function exprInputs(e: Expr, out = new Set<number>()): Set<number> {
  switch (e.kind) {
    case 'input':
      out.add(e.index);
      break;
    case 'const':
      break;
    case 'cast':
    case 'unary':
      exprInputs(e.a, out);
      break;
    case 'binary':
      exprInputs(e.a, out);
      exprInputs(e.b, out);
      break;
    case 'where':
      exprInputs(e.c, out);
      exprInputs(e.a, out);
      exprInputs(e.b, out);
      break;
  }
  return out;
}

/** Rebuilds `e` with input i read as input m(i) (autograd binds only the inputs a kernel reads). */
export function remapInputs(e: Expr, m: (index: number) => number): Expr {
  switch (e.kind) {
    case 'input':
      return E.in(m(e.index));
    case 'const':
      return e;
    case 'cast':
      return E.cast(remapInputs(e.a, m), e.dtype);
    case 'unary':
      return E.un(e.op, remapInputs(e.a, m));
    case 'binary':
      return E.bin(e.op, remapInputs(e.a, m), remapInputs(e.b, m));
    case 'where':
      return E.where(remapInputs(e.c, m), remapInputs(e.a, m), remapInputs(e.b, m));
  }
}

/**
 * What a backend needs of an expression apart from its input views, computed once per Expr
 * object: its structural key and constants (exprKey), the inputs it reads, and (filled by
 * exprDType) its result dtype per input-dtype signature. Exprs are immutable values (E builds
 * plain objects that nothing may change once built), so the object itself is the cache key;
 * a structurally equal but distinct object gets its own entry with the same key string.
 */
export interface ExprInfo {
  readonly key: string;
  readonly consts: readonly { value: number; dtype: DType }[];
  /** used[i]: whether the expression reads input i. */
  readonly used: readonly boolean[];
  dtypes?: Map<number, DType>;
}

const infos = new WeakMap<Expr, ExprInfo>();

export function exprInfo(e: Expr): ExprInfo {
  let info = infos.get(e);
  if (info) return info;
  const consts: { value: number; dtype: DType }[] = [];
  const key = exprKey(e, consts);
  const used: boolean[] = [];
  for (const i of exprInputs(e)) used[i] = true;
  for (let i = 0; i < used.length; i++) used[i] = used[i] === true;
  info = { key, consts, used };
  infos.set(e, info);
  return info;
}
