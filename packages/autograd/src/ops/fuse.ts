import {
  BINARY_TABLE,
  BinaryOp,
  DType,
  E,
  Expr,
  NDArray,
  UNARY_TABLE,
  UnaryOp,
  deriveExpr,
  exprInputs,
  remapInputs,
} from '@surf/core';
import { Scalar, checkScalar, promoteTypes, scalarDType } from '../dtypes';
import { checkInt32 } from '@surf/core';
import { alias, fromOp, needsGrad } from '../node';
import { Tensor } from '../tensor';
import { foldIntoPending } from '../fusion/fold';
import { gradEpilogueOf } from '../fusion/grad-epilogue';

/**
 * The one machine behind every elementwise op: a forward expression and, per operand, a
 * gradient expression, each compiled by the backend into ONE kernel. Tensor operands become
 * kernel inputs (broadcast by NDArray.elementwise), numbers become constants (kernel
 * parameters, so changing them never recompiles). The backward kernel reads the upstream
 * gradient, the saved operands and (if the rule asks) the saved output, and writes the
 * gradients of all operands that require grad in one pass.
 */
export type Operand = Tensor | Scalar;

export interface Rule {
  /** The output from the operands (each already cast to its compute dtype). */
  fwd(x: Expr[]): Expr;
  /** d(out)/d(x_i) times g, for each operand; null where no gradient flows. Reading `out`
   * (exp, sigmoid, tanh, ...) saves the output instead of recomputing it. */
  grad?(g: Expr, x: Expr[], out: Expr): (Expr | null)[];
}

/** The dtype the operands compute in (see dtypes.ts), optionally forced to float32. */
export function computeDType(op: string, xs: readonly Operand[], float = false): DType {
  const dt = promoteTypes(...xs.map((x) => (x instanceof Tensor ? x.dtype : scalarDType(checkScalar(op, x)))));
  if (float) return 'float32';
  // An int32 computation must not saturate a number it cannot hold (int32 + 2**31 wrapped).
  if (dt === 'int32') for (const x of xs) if (typeof x === 'number') checkInt32(op, x, 'number operand');
  return dt;
}

function operandExprs(xs: readonly Operand[], dts: readonly DType[], first: number): Expr[] {
  let k = first;
  return xs.map((x, i) => {
    if (!(x instanceof Tensor)) return E.c(Number(x), dts[i]);
    const e = E.in(k++);
    return x.dtype === dts[i] ? e : E.cast(e, dts[i]);
  });
}

/** Runs expressions over only the inputs they read (fewer buffers bound per kernel). */
export function runExprs(op: string, outs: Expr[], inputs: NDArray[]): NDArray[] {
  const used = new Set<number>();
  outs.forEach((e) => exprInputs(e, used));
  // An expression that reads no input (a constant) still takes its shape from input 0.
  const order = used.size ? [...used].sort((a, b) => a - b) : [0];
  const m = new Map(order.map((i, j) => [i, j]));
  return NDArray.elementwise(
    outs.map((e) => remapInputs(e, (i) => m.get(i)!)),
    order.map((i) => inputs[i]),
    op,
  );
}

/**
 * Applies an elementwise rule. `dts[i]` is the dtype operand i is cast to inside the kernel.
 */
export function fused(op: string, xs: readonly Operand[], dts: readonly DType[], rule: Rule): Tensor {
  // fusion pass: on a pending matmul result this op becomes part of its epilogue (fusion/fold.ts)
  const folded = foldIntoPending(op, xs, dts, rule);
  if (folded) return folded;
  const tensors = xs.filter((x): x is Tensor => x instanceof Tensor);
  const nds = tensors.map((t) => t.nd(op));
  const [out] = runExprs(op, [rule.fwd(operandExprs(xs, dts, 0))], nds);
  if (!rule.grad || !needsGrad(...tensors)) return new Tensor(out);
  // Build the backward expressions now: they tell which arrays must be saved (add saves
  // nothing, mul saves the other operand, exp saves only its output).
  const outIndex = 1 + tensors.length;
  const all = rule.grad(E.in(0), operandExprs(xs, dts, 1), E.in(outIndex));
  const want: (Expr | null)[] = [];
  xs.forEach((x, i) => {
    if (x instanceof Tensor) want.push(x.requiresGrad ? all[i] : null);
  });
  const used = new Set<number>();
  want.forEach((e) => {
    if (e) exprInputs(e, used);
  });
  const slots: (NDArray | null)[] = [
    ...nds.map((nd, k) => (used.has(1 + k) ? alias(nd) : null)),
    used.has(outIndex) ? alias(out) : null,
  ];
  const saved = slots.filter((s): s is NDArray => s !== null);
  const isG = (e: Expr) => e.kind === 'input' && e.index === 0;
  const exprs = want.filter((e): e is Expr => e !== null && !isG(e));
  const t = fromOp(
    op,
    out,
    tensors,
    (g) => {
      // Unsaved slots are never read by the expressions; g stands in for them.
      const ins = [g, ...slots.map((s) => s ?? g)];
      const res = exprs.length ? runExprs(`${op} backward`, exprs, ins) : [];
      let r = 0;
      return want.map((e) => (e === null ? null : isG(e) ? alias(g) : res[r++]));
    },
    saved,
  );
  // fusion pass: a one-gradient backward can ride in the producer's matmul (fusion/grad-epilogue.ts)
  if (t._node) t._node.gradEpilogue = gradEpilogueOf(want, (k) => slots[k - 1]!);
  return t;
}

/** The rule of one raw op: its forward node and the op table's derivative (core ops/table.ts). */
export function tableRule(op: UnaryOp | BinaryOp): Rule {
  // One object per op: the fusion pass caches its plans per rule object (fusion/fold.ts).
  let r = tableRules.get(op);
  if (!r) {
    r = Object.hasOwn(UNARY_TABLE, op)
      ? { fwd: ([a]) => E.un(op as UnaryOp, a), grad: UNARY_TABLE[op as UnaryOp].grad }
      : { fwd: ([a, b]) => E.bin(op as BinaryOp, a, b), grad: BINARY_TABLE[op as BinaryOp].grad };
    tableRules.set(op, r);
  }
  return r;
}
const tableRules = new Map<string, Rule>();

/**
 * A rule whose gradient is derived from its forward expression by the op table's derivatives
 * (core's deriveExpr): for composites where a hand-written rule would only restate the chain
 * rule. Operand i's gradient is that of the kernel input it reads; a number operand gets none.
 */
export function derivedRule(fwd: (x: Expr[]) => Expr): Rule {
  return {
    fwd,
    grad: (g, x) => {
      const grads = deriveExpr(fwd(x), g);
      return x.map((xi) => {
        let node = xi;
        while (node.kind === 'cast') node = node.a;
        return node.kind === 'input' ? (grads.get(node.index) ?? E.f(0)) : null;
      });
    },
  };
}

/** Common rule pieces, as expressions. */
export const X = {
  zero: E.f(0),
  one: E.f(1),
  half: E.f(0.5),
  abs: (a: Expr): Expr => E.abs(a),
  not: (b: Expr): Expr => E.eq(E.cast(b, 'int32'), E.i(0)),
  or: (a: Expr, b: Expr): Expr => E.where(a, a, b),
  and: (a: Expr, b: Expr): Expr => E.where(a, b, a),
  sq: (a: Expr): Expr => E.mul(a, a),
  /** Numerically stable logistic: never exponentiates a positive number. */
  sigmoid: (x: Expr): Expr => {
    const e = E.exp(E.neg(X.abs(x)));
    return E.div(E.where(E.lt(x, E.f(0)), e, E.f(1)), E.add(E.f(1), e));
  },
};
