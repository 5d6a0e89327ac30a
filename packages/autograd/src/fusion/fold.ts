import { DType, E, Expr, NDArray, exprDType, exprInputs, shapesEqual } from '@surf/core';
import { Rule, runExprs } from '../ops/fuse';
import type { Scalar } from '../dtypes';
import { fromOp, needsGrad } from '../node';
import { Tensor } from '../tensor';
import { GradEpilogueTemplate, exprSize, gradEpilogueTemplate } from './grad-epilogue';
import { Held, PendingResult, SavedPending, leaveFrontier } from './pending';

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

const isG = (e: Expr): boolean => e.kind === 'input' && e.index === 0;

function operandShape(s: readonly number[]): readonly number[] {
  let i = 0;
  if (s.length === 0 || s[0] !== 1) return s;
  while (i < s.length && s[i] === 1) i++;
  return s.slice(i);
}

/** True when broadcasting `s` against `shape` gives `shape` itself. */
function broadcastsInto(s: readonly number[], shape: readonly number[]): boolean {
  if (s.length > shape.length) return false;
  for (let i = 1; i <= s.length; i++) {
    const d = s[s.length - i];
    if (d !== 1 && d !== shape[shape.length - i]) return false;
  }
  return true;
}

/** True when `s` (leading 1s stripped) broadcasts into `full` as it does into `shape`. */
function sameBroadcast(s: readonly number[], shape: readonly number[], full: readonly number[]): boolean {
  if (shapesEqual(shape, full)) return true;
  let suffix = 0;
  while (
    suffix < shape.length &&
    suffix < full.length &&
    shape[shape.length - 1 - suffix] === full[full.length - 1 - suffix]
  )
    suffix++;
  return s.length <= suffix;
}

export function foldIntoPending(op: string, xs: readonly Operand[], dts: readonly DType[], rule: Rule): Tensor | null {
  // Cheap flag test first: this runs on every elementwise op, and almost none has a pending operand.
  let target: Tensor | null = null;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x instanceof Tensor && x._lazy !== null && !x._lazy.computed) {
      target = x;
      break;
    }
  }
  if (target === null) return null;
  const p = target._lazy!;
  const tensors: Tensor[] = [];
  const others: Tensor[] = [];
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (!(x instanceof Tensor)) continue;
    tensors.push(x);
    if (x === target || others.includes(x)) continue;
    // Epilogue inputs are float32 tensors (int and bool operands keep the elementwise path);
    // a disposed one is reported by fused(), which names the op.
    if (x.isDisposed || x.dtype !== 'float32') return null;
    others.push(x);
  }
  if (p.inputCount + others.length > MAX_INPUTS) return null;
  // The result must keep the pending value's shape (every other operand broadcasts into it
  // without widening it), and the others broadcast alike in the product.
  for (const t of others) {
    const s = t._dims;
    if (!broadcastsInto(s, p.shape) || !sameBroadcast(operandShape(s), p.shape, p.full)) return null;
    if (t.ndarray.backend !== p.backend) return null;
  }

  const grad = rule.grad !== undefined && needsGrad(...tensors);
  const plan = planFor(op, xs, dts, rule, target, others, p.expr, p.inputCount, p.inputDTypes, grad);
  if (!plan) return null;
  const { expr, want, used } = plan;

  const parts = p.shareParts();
  const extra = others.map((t) => {
    const nd = t.ndarray;
    const s = operandShape(t._dims);
    return nd.reshape(s === t._dims ? nd.shape : s);
  });
  const next = new PendingResult(
    p.kernel,
    parts.operands,
    expr,
    [...parts.inputs, ...extra.map((x) => new Held(x))],
    p.shape,
    p.full,
  );
  leaveFrontier(target);
  if (!grad) return new Tensor(next);

  const outSlot = 1 + tensors.length;
  const savedOut = used.has(outSlot) ? new SavedPending(next.retain()) : null;
  const slots: (NDArray | null)[] = tensors.map((t, j) => (used.has(1 + j) ? t.ndarray.reshape(t.shape) : null));
  const slot = (k: number): NDArray => (k === outSlot ? savedOut!.get() : slots[k - 1]!);
  const exprs = plan.exprs;
  const saved: { dispose(): void }[] = [];
  for (const s of slots) if (s !== null) saved.push(s);
  if (savedOut) saved.push(savedOut);
  const t = fromOp(
    op,
    next,
    tensors,
    (g) => {
      const ins = [g, ...tensors.map((_, j) => slots[j] ?? g), savedOut ? savedOut.get() : g];
      const res = exprs.length ? runExprs(`${op} backward`, exprs, ins) : [];
      let r = 0;
      return want.map((e) => (e === null ? null : isG(e) ? g.reshape(g.shape) : res[r++]));
    },
    saved,
  );
  const epi = plan.epi;
  if (t._node && epi) t._node.gradEpilogue = { parent: epi.parent, expr: epi.expr, inputs: () => epi.slots.map(slot) };
  return t;
}

/** What a fold computes that depends only on the rule, the operands' layout and the epilogue so far. */
interface Plan {
  readonly expr: Expr;
  /** Per tensor operand, its gradient expression (input 0 = g, 1..T = operands, T+1 = out). */
  readonly want: readonly (Expr | null)[];
  readonly used: ReadonlySet<number>;
  /** The wanted gradients that are more than g itself (one backward kernel computes them). */
  readonly exprs: Expr[];
  readonly epi: GradEpilogueTemplate | undefined;
}

/**
 * Plans are cached per rule object, per layout (which operand is the pending one, the others'
 * positions, casts, constants, which need grad) and per epilogue so far (its Expr object: a
 * cached plan's expression is the next fold's base, so a model's chain of folds hits the cache
 * every step). A null base, layout-only entries; rules made per call (a closure over a number)
 * simply miss, and their entries go with them.
 */
interface PlanSlot {
  plain?: Plan | null;
  byBase?: WeakMap<Expr, Plan | null>;
}
const plans = new WeakMap<Rule, Map<string, PlanSlot>>();
const MAX_LAYOUTS = 64;

function planFor(
  op: string,
  xs: readonly Operand[],
  dts: readonly DType[],
  rule: Rule,
  target: Tensor,
  others: readonly Tensor[],
  baseExpr: Expr | null,
  n0: number,
  baseDts: readonly DType[],
  grad: boolean,
): Plan | null {
  let key = `${op}|${n0}|${grad ? 1 : 0}`;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x instanceof Tensor)
      key += `|${x === target ? 'T' : others.indexOf(x)}${x.dtype === dts[i] ? '' : dts[i]}${x.requiresGrad ? 'g' : ''}`;
    else key += `|n${Number(x)}:${dts[i]}`;
  }
  let byLayout = plans.get(rule);
  if (!byLayout) plans.set(rule, (byLayout = new Map()));
  let slot = byLayout.get(key);
  if (!slot) {
    if (byLayout.size >= MAX_LAYOUTS) byLayout.clear(); // changing constants: keep it bounded
    byLayout.set(key, (slot = {}));
  }
  if (baseExpr === null) {
    if (slot.plain === undefined)
      slot.plain = buildPlan(op, xs, dts, rule, target, others, baseExpr, n0, baseDts, grad);
    return slot.plain;
  }
  const byBase = (slot.byBase ??= new WeakMap());
  let plan = byBase.get(baseExpr);
  if (plan === undefined)
    byBase.set(baseExpr, (plan = buildPlan(op, xs, dts, rule, target, others, baseExpr, n0, baseDts, grad)));
  return plan;
}

function buildPlan(
  op: string,
  xs: readonly Operand[],
  dts: readonly DType[],
  rule: Rule,
  target: Tensor,
  others: readonly Tensor[],
  baseExpr: Expr | null,
  n0: number,
  baseDts: readonly DType[],
  grad: boolean,
): Plan | null {
  // Forward: the target's leaves become the current epilogue, the others new epilogue inputs.
  const base = baseExpr ?? E.in(0);
  const leaves = xs.map((x, i): Expr => {
    if (!(x instanceof Tensor)) return E.c(Number(x), dts[i]);
    const e = x === target ? base : E.in(n0 + 1 + others.indexOf(x));
    return x.dtype === dts[i] ? e : E.cast(e, dts[i]);
  });
  const expr = rule.fwd(leaves);
  if (exprSize(expr) > MAX_NODES) return null;
  const inDts: DType[] = ['float32', ...baseDts, ...others.map((t) => t.dtype)];
  let outDt: DType;
  try {
    outDt = exprDType(expr, inDts, op);
  } catch {
    return null;
  }
  if (outDt !== 'float32') return null;

  // Backward: as fused() builds it, over slots 1..T (the tensor operands) and T+1 (the output).
  const want: (Expr | null)[] = [];
  const used = new Set<number>();
  if (grad) {
    let k = 1;
    const nT = xs.filter((x) => x instanceof Tensor).length;
    const slotExprs = xs.map((x, i) =>
      x instanceof Tensor ? (x.dtype === dts[i] ? E.in(k++) : E.cast(E.in(k++), dts[i])) : E.c(Number(x), dts[i]),
    );
    const all = rule.grad!(E.in(0), slotExprs, E.in(1 + nT));
    xs.forEach((x, i) => {
      if (x instanceof Tensor) want.push(x.requiresGrad ? all[i] : null);
    });
    want.forEach((e) => {
      if (e) exprInputs(e, used);
    });
    // Its backward reads the pending operand's value: that value would have to exist.
    let j = 0;
    for (const x of xs) {
      if (!(x instanceof Tensor)) continue;
      j++;
      if (x === target && used.has(j)) return null;
    }
  }
  const exprs = want.filter((e): e is Expr => e !== null && !isG(e));
  return { expr, want, used, exprs, epi: gradEpilogueTemplate(want) };
}
