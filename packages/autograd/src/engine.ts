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

function topoSort(root: Tensor): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>([root]);
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
  if (!root.requiresGrad)
    throw new ValueError(
      `backward: the tensor of shape ${fmtShape(root.shape)} does not require grad (create leaves with requiresGrad: true, outside noGrad)`,
    );
  let g0: NDArray | null = null;
  // A root whose op can take the seed 1 implicitly (softmaxCrossEntropy) gets no seed array.
  const unitRoot = grad === undefined && root._node?.backwardOne ? root : null;
  if (grad === undefined) {
    if (root.numel !== 1)
      throw new ShapeError(
        `backward: the tensor has shape ${fmtShape(root.shape)}; a gradient argument is needed unless it holds one element (a scalar loss)`,
      );
    if (!unitRoot) g0 = NDArray.full(root.ndarray.backend, root.shape, 1);
  } else {
    if (!shapesEqual(grad.shape, root.shape))
      throw new ShapeError(
        `backward: gradient has shape ${fmtShape(grad.shape)}; expected the tensor's shape ${fmtShape(root.shape)}`,
      );
    g0 = grad.dtype === 'float32' ? alias(grad) : grad.cast('float32');
  }
  const order = topoSort(root);
  const grads = new Map<Tensor, NDArray>(g0 ? [[root, g0]] : []);
  const skipped = new Set<Tensor>();
  try {
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i];
      if (skipped.has(t)) continue;
      const g = grads.get(t);
      grads.delete(t);
      if (t === unitRoot) {
        const node = t._node!;
        node.checkVersions?.();
        distribute(node.parents, node.backwardOne!(), grads);
        if (!opts.retainGraph) freeNode(t, false);
        continue;
      }
      if (t.isLeaf) {
        if (g) t._accumulateGrad(g);
        continue;
      }
      const node = t._node;
      if (!node) {
        g?.dispose();
        throw new DisposedError(
          `backward: the graph through a tensor of shape ${fmtShape(t.shape)} was already freed (by an earlier backward(), or by disposing it and everything computed from it); pass { retainGraph: true } to backward through it twice`,
        );
      }
      if (!g) {
        if (!opts.retainGraph) freeNode(t, false);
        continue;
      }
      // fusion pass: parents whose own backward this node applies in its kernel (fusion/grad-epilogue.ts)
      const epis = node.backwardWith ? foldableParents(node, grads, skipped) : null;
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
): (GradEpilogue | undefined)[] | null {
  const ps = node.parents;
  let epis: (GradEpilogue | undefined)[] | null = null;
  for (let k = 0; k < ps.length; k++) {
    const p = ps[k];
    const e = p._node?.gradEpilogue;
    if (!e || p._uses !== 1 || grads.has(p) || skipped.has(p) || !p.requiresGrad) continue;
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
