import { E, Expr, NDArray, exprInputs, matmulBatch, numel, shapesEqual } from '@surf/core';
import type { GradEpilogue } from '../node';
import { unbroadcast } from '../engine';

/**
 * The backward half of the fusion pass. An elementwise node whose backward sends a gradient
 * to one parent (ReLU's mask, tanh's 1 - y², a scaling) describes that backward as an
 * epilogue; the engine hands it to the node producing the incoming gradient when nothing
 * else reads the tensor in between, and a matmul applies it to its input gradient in the
 * same kernel (the ReLU mask of an MLP's hidden layer rides in the next layer's dgrad).
 */

/** Rebuilds an expression with each input leaf replaced by `leaf(index)`; other nodes as-is. */
export function mapInputs(e: Expr, leaf: (index: number) => Expr): Expr {
  if (e.kind === 'input') return leaf(e.index);
  // Generic over node kinds: every child sits in a, b or c.
  const n = e as unknown as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const k of ['a', 'b', 'c']) {
    const child = n[k];
    if (child && typeof child === 'object') {
      const m = mapInputs(child as Expr, leaf);
      if (m !== child) (out ??= { ...n })[k] = m;
    }
  }
  return (out ?? e) as Expr;
}

/** The number of nodes in an expression tree (shared subtrees counted each time). */
export function exprSize(e: Expr): number {
  if (e.kind === 'input' || e.kind === 'const') return 1;
  const n = e as unknown as Record<string, unknown>;
  let s = 1;
  for (const k of ['a', 'b', 'c']) if (n[k] && typeof n[k] === 'object') s += exprSize(n[k] as Expr);
  return s;
}

/**
 * From an elementwise node's per-parent gradient expressions (input 0 = g, input k = slot k),
 * the epilogue when exactly one parent gets a gradient that is more than g itself.
 */
export function gradEpilogueOf(want: readonly (Expr | null)[], slot: (k: number) => NDArray): GradEpilogue | undefined {
  const t = gradEpilogueTemplate(want);
  return t && { parent: t.parent, expr: t.expr, inputs: () => t.slots.map(slot) };
}

/** gradEpilogueOf without the arrays: the parent, the expression and the slots it reads, in order. */
export interface GradEpilogueTemplate {
  readonly parent: number;
  readonly expr: Expr;
  readonly slots: readonly number[];
}

export function gradEpilogueTemplate(want: readonly (Expr | null)[]): GradEpilogueTemplate | undefined {
  const live = want.map((e, i) => [e, i] as const).filter(([e]) => e !== null);
  if (live.length !== 1) return undefined;
  const [expr, parent] = live[0] as readonly [Expr, number];
  if (expr.kind === 'input' && expr.index === 0) return undefined;
  const slots = [...exprInputs(expr)].filter((k) => k !== 0).sort((a, b) => a - b);
  const m = new Map(slots.map((k, j) => [k, j + 1]));
  const ex = mapInputs(expr, (k) => E.in(k === 0 ? 0 : m.get(k)!));
  return { parent, expr: ex, slots };
}

/** The epilogue applied on its own (one elementwise kernel), consuming `g`. */
export function applyGradEpilogue(g: NDArray, e: GradEpilogue): NDArray {
  const [r] = NDArray.elementwise([e.expr], [g, ...e.inputs()], 'backward (epilogue)');
  g.dispose();
  return r;
}

/**
 * a·b as the gradient of an operand of shape `shape`, with `e` applied: in the matmul's
 * epilogue when the product already has that shape, else after summing broadcast batch dims.
 * `reshape` maps the product to the operand's shape (1-d operands, a linear's folded rows).
 */
export function matmulGrad(
  a: NDArray,
  b: NDArray,
  e: GradEpilogue | undefined,
  shape: readonly number[],
  reshape: (x: NDArray) => NDArray = (x) => x,
): NDArray {
  const prodShape = [...matmulBatch('matmul backward', a.shape, b.shape), a.shape[a.ndim - 2], b.shape[b.ndim - 1]];
  if (e && shapesEqual(prodShape, shape)) return a.matmul(b, { expr: e.expr, inputs: e.inputs() });
  if (e && numel(prodShape) === numel(shape)) {
    // The product is the operand with its dims regrouped (a linear's rows, a 1-d operand):
    // inputs of the operand's full shape that regroup as views still fuse.
    const ins = e.inputs();
    if (ins.every((x) => shapesEqual(x.shape, shape) && x.view.reshape(prodShape) !== null)) {
      const views = ins.map((x) => x.reshape(prodShape));
      const g = a.matmul(b, { expr: e.expr, inputs: views });
      views.forEach((v) => v.dispose());
      return reshape(g);
    }
  }
  const g = reshape(a.matmul(b));
  return e ? applyGradEpilogue(unbroadcast(g, shape), e) : g;
}
