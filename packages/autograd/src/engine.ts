import { DisposedError, E, NDArray, ShapeError, ValueError, fmtShape, parseOptions, shapesEqual } from '@surf/core';
import { GradEpilogue, GradNode, alias } from './node';
import type { Tensor } from './tensor';

/**
 * Reverse-mode autodiff, micrograd style: a topological sort of the tensors that require
 * grad, then one sweep from the output back, keeping a map from tensor to its gradient so
 * far. Gradients are NDArrays computed by each node's backward rule on the backend (no
 * readback). An entry leaves the map the moment its tensor's rule has run, and the node's
 * saved arrays are freed right after, so memory stays flat; only leaves keep `.grad`.
 */
export interface BackwardOptions {
  /** Keep the graph (and its saved arrays) so backward can run through it again. */
  retainGraph?: boolean;
}

/** Sums a broadcast gradient back to the shape of the operand that was broadcast. */
export function unbroadcast(g: NDArray, shape: readonly number[]): NDArray {
  if (shapesEqual(g.shape, shape)) return g;
  const lead = g.ndim - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < g.ndim; i++) if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) axes.push(i);
  const s = g.sum(axes, true);
  const out = s.reshape(shape);
  s.dispose();
  g.dispose();
  return out;
}

/** a + b, consuming both. */
export function addInto(a: NDArray, b: NDArray): NDArray {
  const [s] = NDArray.elementwise([E.add(E.in(0), E.in(1))], [a, b], 'backward');
  a.dispose();
  b.dispose();
  return s;
}

function topoSort(roots: readonly Tensor[]): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>();
  for (const root of roots) {
    if (seen.has(root)) continue;
    seen.add(root);
    // Iterative DFS (deep graphs such as long RNN unrolls would overflow the JS stack).
    const stack: [Tensor, number][] = [[root, 0]];
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [t, i] = top;
      const parents = t._node ? t._node.parents : [];
      if (i < parents.length) {
        top[1]++;
        const p = parents[i];
        if (p.requiresGrad && !seen.has(p)) {
          seen.add(p);
          stack.push([p, 0]);
        }
      } else {
        stack.pop();
        order.push(t);
      }
    }
  }
  return order;
}

/** Frees a node's saved arrays and drops its hold on its parents. */
export function freeNode(t: Tensor, cascade: boolean): void {
  const node = t._node;
  if (!node) return;
  t._node = null;
  node.saved.forEach((s) => s.dispose());
  for (const p of node.parents) {
    if (!p._node) continue;
    p._uses--;
    if (cascade) p._releaseGraphIfUnused();
  }
}

export function runBackward(root: Tensor, grad: NDArray | undefined, opts: BackwardOptions = {}): void {
  opts = parseOptions<BackwardOptions>('backward', opts, { retainGraph: 'boolean' });
  runGraph('backward', [root], [grad], opts, null);
}

/** The seed of one root: `grad` checked against its shape, or 1 for a one-element root. */
function seedOf(op: string, root: Tensor, grad: NDArray | undefined, k: number | null): NDArray {
  const which = k === null ? "the tensor's" : `outputs[${k}]'s`;
  if (grad === undefined) {
    if (root.numel !== 1)
      throw new ShapeError(
        `${op}: ${k === null ? 'the tensor' : `outputs[${k}]`} has shape ${fmtShape(root.shape)}; a gradient argument is needed unless it holds one element (a scalar loss)`,
      );
    return NDArray.full(root.ndarray.backend, root.shape, 1);
  }
  if (!shapesEqual(grad.shape, root.shape))
    throw new ShapeError(
      `${op}: gradient has shape ${fmtShape(grad.shape)}; expected ${which} shape ${fmtShape(root.shape)}`,
    );
  return grad.dtype === 'float32' ? alias(grad) : grad.cast('float32');
}

/**
 * One reverse sweep from `roots` (seeded with `grads`). Without `capture`, leaves accumulate
 * into `.grad` (backward()). With `capture` (autograd's grad()), no `.grad` is touched: the
 * total gradient reaching each captured tensor is stored in the map instead, and only the
 * nodes on a path to a captured tensor run their rule. Tensor hooks run on each tensor's
 * total gradient before it is used; non-leaves marked retainGrad() keep it in `.grad`.
 */
export function runGraph(
  op: string,
  roots: readonly Tensor[],
  seeds: readonly (NDArray | undefined)[],
  opts: BackwardOptions,
  capture: Map<Tensor, NDArray | null> | null,
): void {
  roots.forEach((root, k) => {
    if (!root.requiresGrad)
      throw new ValueError(
        `${op}: ${roots.length > 1 || capture ? `outputs[${k}]` : 'the tensor'} of shape ${fmtShape(root.shape)} does not require grad (create leaves with requiresGrad: true, outside noGrad)`,
      );
  });
  const single = roots.length === 1 && !capture ? roots[0] : null;
  // A root whose op can take the seed 1 implicitly (softmaxCrossEntropy) gets no seed array.
  const unitRoot =
    single && seeds[0] === undefined && single._node?.backwardOne && !single._observed && single.numel === 1
      ? single
      : null;
  const grads = new Map<Tensor, NDArray>();
  try {
    roots.forEach((root, k) => {
      if (root === unitRoot) return;
      const g0 = seedOf(op, root, seeds[k], single ? null : k);
      const prev = grads.get(root);
      grads.set(root, prev ? addInto(prev, g0) : g0);
    });
  } catch (e) {
    grads.forEach((g) => g.dispose());
    throw e;
  }
  const order = topoSort(roots);
  // With capture, only tensors on a path to a captured one need their rule run.
  const leads = capture ? new Set<Tensor>() : null;
  if (leads)
    for (const t of order) if (capture!.has(t) || (t._node && t._node.parents.some((p) => leads.has(p)))) leads.add(t);
  const skipped = new Set<Tensor>();
  try {
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i];
      if (skipped.has(t)) continue;
      let g = grads.get(t);
      grads.delete(t);
      if (t === unitRoot) {
        const node = t._node!;
        node.checkVersions?.();
        distribute(node.parents, node.backwardOne!(), grads);
        if (!opts.retainGraph) freeNode(t, false);
        continue;
      }
      if (g && t._observed) g = t._observe(g, !capture);
      if (g && capture?.has(t)) {
        const prev = capture.get(t);
        capture.set(t, prev ? addInto(prev, alias(g)) : alias(g));
      }
      if (t.isLeaf) {
        if (g && !capture) t._accumulateGrad(g);
        else g?.dispose();
        continue;
      }
      const node = t._node;
      if (!node) {
        g?.dispose();
        throw new DisposedError(
          `${op}: the graph through a tensor of shape ${fmtShape(t.shape)} was already freed (by an earlier backward(), or by disposing it and everything computed from it); pass { retainGraph: true } to backward through it twice`,
        );
      }
      if (!g || (leads && !node.parents.some((p) => leads.has(p)))) {
        g?.dispose();
        if (!opts.retainGraph) freeNode(t, false);
        continue;
      }
      // fusion pass: parents whose own backward this node applies in its kernel (fusion/grad-epilogue.ts)
      const epis = node.backwardWith ? foldableParents(node, grads, skipped, capture) : null;
      let gs: (NDArray | null)[];
      try {
        node.checkVersions?.();
        gs = epis ? node.backwardWith!(g, epis) : node.backward(g);
      } finally {
        g.dispose();
      }
      distribute(
        epis ? node.parents.map((p, k) => (epis[k] ? p._node!.parents[epis[k]!.parent] : p)) : node.parents,
        gs,
        grads,
      );
      if (!opts.retainGraph) freeNode(t, false);
      if (epis && !opts.retainGraph)
        node.parents.forEach((p, k) => {
          if (epis[k]) freeNode(p, false);
        });
    }
  } finally {
    grads.forEach((g) => g.dispose());
  }
}

/**
 * fusion pass: for each parent, its node's gradient epilogue when this node is the only one
 * reading the parent (so the parent's whole gradient comes from here); those parents are
 * marked skipped: their backward runs inside this node's. Null when there is none.
 */
function foldableParents(
  node: GradNode,
  grads: Map<Tensor, NDArray>,
  skipped: Set<Tensor>,
  capture: Map<Tensor, NDArray | null> | null,
): (GradEpilogue | undefined)[] | null {
  const ps = node.parents;
  let epis: (GradEpilogue | undefined)[] | null = null;
  for (let k = 0; k < ps.length; k++) {
    const p = ps[k];
    const e = p._node?.gradEpilogue;
    if (!e || p._uses !== 1 || grads.has(p) || skipped.has(p) || !p.requiresGrad) continue;
    // A parent whose own gradient is looked at (hooks, retainGrad, grad()) needs it as an array.
    if (p._observed || capture?.has(p)) continue;
    let n = 0;
    for (const q of ps) if (q === p) n++;
    if (n !== 1) continue;
    // The parent's rule runs inside this node's kernel: its in-place check runs here.
    p._node!.checkVersions?.();
    skipped.add(p);
    (epis ??= new Array<GradEpilogue | undefined>(ps.length).fill(undefined))[k] = e;
  }
  return epis;
}

/** Adds each parent's gradient (consumed) into the map, summing broadcast dims back. */
function distribute(parents: readonly Tensor[], gs: (NDArray | null)[], grads: Map<Tensor, NDArray>): void {
  for (let k = 0; k < parents.length; k++) {
    const p = parents[k];
    const gp = gs[k];
    if (!gp) continue;
    if (!p.requiresGrad) {
      gp.dispose();
      continue;
    }
    const r = unbroadcast(gp, p._dims);
    const prev = grads.get(p);
    grads.set(p, prev ? addInto(prev, r) : r);
  }
}
