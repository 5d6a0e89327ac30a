/**
 * The user-facing functions over the op table's newer raw ops, gathered for Tensor's methods
 * and the package exports (each lives in the file of its idea).
 */
export { erf, log1p, expm1 } from './special';
export { floor, ceil, round, trunc, sign } from './rounding';
export { bitwiseAnd, bitwiseOr, bitwiseXor } from './bitwise';
export { remainder } from './arith';
export { silu, gelu } from './activations';
