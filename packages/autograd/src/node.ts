import { Expr, NDArray, ValueError, fmtShape } from '@surf/core';
import { isGradEnabled } from './grad-mode';
import { Tensor } from './tensor';
import type { PendingResult } from './fusion/pending';

/**
 * One recorded op of the graph. `backward` maps the gradient of the op's output to one
 * gradient per parent (null where none flows); it may only read arrays in `saved`, which are
 * shared references taken when the op ran, so disposing or assigning a parent later does not
 * change what backward sees. The engine frees `saved` as soon as the node has run.
 */
export interface GradNode {
  readonly op: string;
  readonly parents: readonly Tensor[];
  readonly backward: (g: NDArray) => (NDArray | null)[];
  readonly saved: { dispose(): void }[];
  /**
   * Optional: `backward` for a gradient of all ones, without the array. The engine uses it
   * for a scalar root seeded with 1 (`loss.backward()`), saving the kernel that fills the seed.
   */
  readonly backwardOne?: () => (NDArray | null)[];
  // fusion pass (fusion/grad-epilogue.ts)
  /**
   * Elementwise nodes whose backward sends a gradient to one parent only: that backward as an
   * expression (input 0 = the incoming gradient, inputs 1.. = `inputs()`), so the node that
   * produces the incoming gradient (a matmul) can apply it in its epilogue instead.
   */
  gradEpilogue?: GradEpilogue;
  /**
   * Nodes that can apply such an epilogue to the gradient of parent i: `epis[i]`, when set,
   * is the backward of parent i's own node, and the result is the gradient of that node's
   * parent `epis[i].parent` (the engine then skips parent i's node).
   */
  /** Throws when a parent was modified in place after this op used it (ops: version check);
   * the engine calls it before `backward`, `backwardOne` or `backwardWith`. */
  checkVersions?: () => void;
  backwardWith?: (g: NDArray, epis: readonly (GradEpilogue | undefined)[]) => (NDArray | null)[];
}

export interface GradEpilogue {
  readonly parent: number;
  readonly expr: Expr;
  inputs(): NDArray[];
}

/** A second reference to the same storage and view (no copy): disposing one keeps the other. */
export function alias(nd: NDArray): NDArray {
  return nd.share();
}

/** True when an op on these operands must record a node. */
export function needsGrad(...xs: unknown[]): boolean {
  return isGradEnabled() && xs.some((x) => x instanceof Tensor && x.requiresGrad);
}

function checkVersions(op: string, parents: readonly Tensor[], versions: readonly number[]): void {
  for (let i = 0; i < parents.length; i++) {
    const p = parents[i];
    if (p._version !== versions[i])
      throw new ValueError(
        `backward: a tensor of shape ${fmtShape(p.shape)} that '${op}' used was modified in place afterwards (version ${versions[i]} -> ${p._version}); autograd needs the value '${op}' saw. Clone it before modifying it (x.clone().add_(...)), or modify it before using it`,
      );
  }
}

/**
 * Wraps an op's result. When grad is enabled and a parent requires grad, the result records
 * a node; otherwise `saved` is released at once and the result is a plain tensor.
 */
export function fromOp(
  op: string,
  out: NDArray | PendingResult,
  parents: readonly Tensor[],
  backward: GradNode['backward'],
  saved: { dispose(): void }[] = [],
  backwardOne?: GradNode['backwardOne'],
): Tensor {
  if (!needsGrad(...parents)) {
    saved.forEach((s) => s.dispose());
    return new Tensor(out);
  }
  // in-place version check
  // A parent modified in place after this op used it no longer holds the value (nor the
  // history) this op saw: the engine runs this check before the rule (as PyTorch refuses to).
  const versions = parents.map((p) => p._version);
  const t = new Tensor(out, {
    node: backwardOne ? { op, parents, backward, saved, backwardOne } : { op, parents, backward, saved },
  });
  t._node!.checkVersions = () => checkVersions(op, parents, versions);
  return t;
}
