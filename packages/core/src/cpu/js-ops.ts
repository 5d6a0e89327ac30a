import type { DType } from '../dtype';
import type { BinaryOp, UnaryOp } from '../ops/table';
import { erf, fmodFloor, imod, rint, sign } from '../ops/scalar';
import { castScalar } from '../dtype';

/**
 * How the CPU's JS kernels spell each raw op (the semantics are the op table's). Float math
 * is IEEE f32 as on the GPU: every float node is rounded with F = Math.fround (JS computes in
 * doubles, and rounding only on store would make eq/lt/casts of intermediates disagree with
 * the GPU). int32 math wraps like i32 (|0, imul). `dt` is the operands' dtype. Names used
 * here that are not JS globals come from JS_HELPERS.
 */
type Spell1 = (a: string, dt: DType) => string;
type Spell2 = (a: string, b: string, dt: DType) => string;
const int = (dt: DType) => dt === 'int32';

export const JS_UNARY: Record<UnaryOp, Spell1> = {
  neg: (a, dt) => (int(dt) ? `((-(${a}))|0)` : `(-(${a}))`),
  exp: (a) => `F(Math.exp(${a}))`,
  log: (a) => `F(Math.log(${a}))`,
  sqrt: (a) => `F(Math.sqrt(${a}))`,
  recip: (a) => `F(1/(${a}))`,
  sin: (a) => `F(Math.sin(${a}))`,
  cos: (a) => `F(Math.cos(${a}))`,
  tanh: (a) => `F(Math.tanh(${a}))`,
  erf: (a) => `F(erf(${a}))`,
  floor: (a) => `Math.floor(${a})`,
  ceil: (a) => `Math.ceil(${a})`,
  round: (a) => `rint(${a})`,
  trunc: (a) => `Math.trunc(${a})`,
  log1p: (a) => `F(Math.log1p(${a}))`,
  expm1: (a) => `F(Math.expm1(${a}))`,
  abs: (a, dt) => (int(dt) ? `(Math.abs(${a})|0)` : `Math.abs(${a})`),
  sign: (a) => `sign(${a})`,
};

export const JS_BINARY: Record<BinaryOp, Spell2> = {
  add: (a, b, dt) => (int(dt) ? `((${a}+${b})|0)` : `F(${a}+${b})`),
  sub: (a, b, dt) => (int(dt) ? `((${a}-${b})|0)` : `F(${a}-${b})`),
  mul: (a, b, dt) => (int(dt) ? `Math.imul(${a},${b})` : `F(${a}*${b})`),
  div: (a, b, dt) => (int(dt) ? `idiv(${a},${b})` : `F(${a}/${b})`),
  pow: (a, b) => `F(Math.pow(${a},${b}))`,
  max: (a, b) => `Math.max(${a},${b})`,
  min: (a, b) => `Math.min(${a},${b})`,
  mod: (a, b, dt) => (int(dt) ? `imod(${a},${b})` : `F(fmodFloor(${a},${b}))`),
  eq: (a, b) => `((${a})===(${b})?1:0)`,
  lt: (a, b) => `((${a})<(${b})?1:0)`,
  and: (a, b) => `((${a})&(${b}))`,
  or: (a, b) => `((${a})|(${b}))`,
  xor: (a, b) => `((${a})^(${b}))`,
};

/** The functions a compiled kernel closes over (JS has no erf, half-even round, ...). */
export const JS_HELPERS = {
  erf,
  rint,
  sign,
  imod,
  fmodFloor,
  toI32: (v: number) => castScalar(v, 'int32'),
  // Integer division truncates toward zero; division by zero gives 0 on every backend.
  idiv: (a: number, b: number) => (b === 0 ? 0 : (a / b) | 0),
};
