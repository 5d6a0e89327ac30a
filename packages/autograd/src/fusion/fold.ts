import { DType, E, Expr, NDArray, broadcastShapes, exprDType, exprInputs, shapesEqual } from '@surf/core';
import { Rule, runExprs } from '../ops/fuse';
import type { Scalar } from '../dtypes';
import { fromOp, needsGrad } from '../node';
import { Tensor } from '../tensor';
import { exprSize, gradEpilogueOf } from './grad-epilogue';
import { PendingResult, SavedPending, leaveFrontier } from './pending';

/**
 * The forward half of the fusion pass: an elementwise op (any rule run by ops/fuse.ts) whose
 * operand is a pending matmul result (fusion/pending.ts) folds into that matmul's epilogue
 * and returns a new pending result, instead of running a kernel. It folds when:
 * - the result keeps the pending value's shape (the other operands broadcast into it, and
 *   into the product's trailing dims the same way) and is float32;
 * - its backward does not read the pending operand's value (that value would then have to
 *   exist): rules reading only the output, another operand or nothing fold (add, scaling,
 *   ReLU, tanh, sigmoid, exp); others (log, gelu) run on the computed value as before;
 * - the epilogue stays small (input and node limits below).
 * The pending operand is left as it was: reading it later computes the plain product (one
 * more kernel, same numbers), which is the price of never keeping a value nobody asked for.
 */
const MAX_INPUTS = 4;
const MAX_NODES = 96;

type Operand = Tensor | Scalar;

function operandShape(t: Tensor): number[] {
  const s = t.shape;
  let i = 0;
  while (i < s.length && s[i] === 1) i++;
  return s.slice(i);
}

/** True when `s` (leading 1s stripped) broadcasts into `full` as it does into `shape`. */
function sameBroadcast(s: readonly number[], shape: readonly number[], full: readonly number[]): boolean {
  if (shapesEqual(shape, full)) return true;
  let suffix = 0;
  while (suffix < shape.length && suffix < full.length && shape[shape.length - 1 - suffix] === full[full.length - 1 - suffix]) suffix++;
  return s.length <= suffix;
}

export function foldIntoPending(op: string, xs: readonly Operand[], dts: readonly DType[], rule: Rule): Tensor | null {
  const target = xs.find((x): x is Tensor => x instanceof Tensor && x._lazy !== null && !x._lazy.computed);
  if (!target) return null;
  const p = target._lazy!;
  const tensors = xs.filter((x): x is Tensor => x instanceof Tensor);
  const others = [...new Set(tensors.filter((t) => t !== target))];
  if (others.some((t) => t.isDisposed)) return null; // fused() names the op in the error
  // Epilogue inputs are float32 tensors (int and bool operands keep the elementwise path).
  if (others.some((t) => t.dtype !== 'float32')) return null;
  if (p.inputCount + others.length > MAX_INPUTS) return null;
  // The result must keep the pending value's shape, and the others broadcast alike in the product.
  let outShape: number[];
  try {
    outShape = broadcastShapes(op, ...tensors.map((t) => t.shape));
  } catch {
    return null; // fused() reports the shape error
  }
  if (!shapesEqual(outShape, p.shape)) return null;
  if (!others.every((t) => sameBroadcast(operandShape(t), p.shape, p.full))) return null;
  if (others.some((t) => t.ndarray.backend !== p.backend)) return null;

  // Forward: the target's leaves become the current epilogue, the others new epilogue inputs.
  const base = p.expr ?? E.in(0);
  const n0 = p.inputCount;
  const otherIndex = new Map(others.map((t, j) => [t, n0 + 1 + j]));
  const leaves = xs.map((x, i): Expr => {
    if (!(x instanceof Tensor)) return E.c(Number(x), dts[i]);
    const e = x === target ? base : E.in(otherIndex.get(x)!);
    return x.dtype === dts[i] ? e : E.cast(e, dts[i]);
  });
  const expr = rule.fwd(leaves);
  if (exprSize(expr) > MAX_NODES) return null;
  const inDts: DType[] = ['float32', ...p.inputDTypes, ...others.map((t) => t.dtype)];
  let outDt: DType;
  try {
    outDt = exprDType(expr, inDts, op);
  } catch {
    return null;
  }
  if (outDt !== 'float32') return null;

  // Backward: as fused() builds it, over slots 1..T (the tensor operands) and T+1 (the output).
  const grad = rule.grad && needsGrad(...tensors);
  const want: (Expr | null)[] = [];
  const used = new Set<number>();
  if (grad) {
    let k = 1;
    const slotExprs = xs.map((x, i) => (x instanceof Tensor ? (x.dtype === dts[i] ? E.in(k++) : E.cast(E.in(k++), dts[i])) : E.c(Number(x), dts[i])));
    const all = rule.grad!(E.in(0), slotExprs, E.in(1 + tensors.length));
    xs.forEach((x, i) => { if (x instanceof Tensor) want.push(x.requiresGrad ? all[i] : null); });
    want.forEach((e) => { if (e) exprInputs(e, used); });
    if (tensors.some((t, j) => t === target && used.has(1 + j))) return null;
  }

  const parts = p.aliasParts();
  const extra = others.map((t) => {
    const nd = t.ndarray;
    const s = operandShape(t);
    return shapesEqual(s, nd.shape) ? nd.reshape(nd.shape) : nd.reshape(s);
  });
  const next = new PendingResult(p.kernel, parts.operands, expr, [...parts.inputs, ...extra], p.shape, p.full);
  leaveFrontier(target);
  if (!grad) return new Tensor(next);

  const outSlot = 1 + tensors.length;
  const savedOut = used.has(outSlot) ? new SavedPending(next.retain()) : null;
  const slots: (NDArray | null)[] = tensors.map((t, j) => (used.has(1 + j) ? t.ndarray.reshape(t.shape) : null));
  const slot = (k: number): NDArray => (k === outSlot ? savedOut!.get() : slots[k - 1]!);
  const isG = (e: Expr) => e.kind === 'input' && e.index === 0;
  const exprs = want.filter((e): e is Expr => e !== null && !isG(e));
  const saved = [...slots.filter((s): s is NDArray => s !== null), ...(savedOut ? [savedOut] : [])];
  const t = fromOp(op, next, tensors, (g) => {
    const ins = [g, ...tensors.map((_, j) => slots[j] ?? g), savedOut ? savedOut.get() : g];
    const res = exprs.length ? runExprs(`${op} backward`, exprs, ins) : [];
    let r = 0;
    return want.map((e) => (e === null ? null : isG(e) ? g.reshape(g.shape) : res[r++]));
  }, saved);
  if (t._node) t._node.gradEpilogue = gradEpilogueOf(want, slot);
  return t;
}
