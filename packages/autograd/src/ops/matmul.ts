import { BackendError, DTypeError, NDArray, ShapeError, fmtShape, matmulBatch, numel } from '@surf/core';
import { GradEpilogue, alias, fromOp } from '../node';
import { PendingResult, matmulKernel } from '../fusion/pending';
import { matmulGrad } from '../fusion/grad-epilogue';
import { Tensor, checkTensor } from '../tensor';

/**
 * torch.matmul: [...batch, m, k] @ [...batch, k, n] with broadcast batch dims; a 1-d left
 * operand is a row vector and a 1-d right operand a column vector, their unit dims removed
 * from the result. Backward: ga = g @ bᵀ, gb = aᵀ @ g (transposes are views); the engine
 * sums gradients of broadcast batch dims back.
 */
export function matmul(a: Tensor, b: Tensor, op = 'matmul'): Tensor {
  checkTensor(op, b, 'the right operand');
  const an = a.nd(op),
    bn = b.nd(op);
  if (an.dtype !== 'float32' || bn.dtype !== 'float32')
    throw new DTypeError(`${op}: got dtypes ${an.dtype} and ${bn.dtype}; expected float32 (cast with .float())`);
  if (an.ndim === 0 || bn.ndim === 0)
    throw new ShapeError(
      `${op}: got shapes ${fmtShape(an.shape)} and ${fmtShape(bn.shape)}; expected both at least 1-d (use mul for scalars)`,
    );
  const k = an.shape[an.ndim - 1];
  const k2 = bn.ndim === 1 ? bn.shape[0] : bn.shape[bn.ndim - 2];
  if (k !== k2)
    throw new ShapeError(
      `${op}: inner dimensions differ: a ${fmtShape(an.shape)} and b ${fmtShape(bn.shape)} (expected a's last dim ${k} to equal b's ${bn.ndim === 1 ? 'only' : 'second-to-last'} dim ${k2})`,
    );
  // Validate before making the 2-d views below, so a rejected call leaves nothing behind.
  matmulBatch(op, an.shape, bn.shape);
  if (an.backend !== bn.backend)
    throw new BackendError(`${op}: operands live on different backends (${an.backend.name} and ${bn.backend.name})`);
  const full = [
    ...matmulBatch(op, an.shape, bn.shape),
    an.ndim === 1 ? 1 : an.shape[an.ndim - 2],
    bn.ndim === 1 ? 1 : bn.shape[bn.ndim - 1],
  ];
  an.backend.checkOutput?.(op, 'float32', numel(full));
  const a2 = an.ndim === 1 ? an.reshape([1, k]) : alias(an);
  const b2 = bn.ndim === 1 ? bn.reshape([k, 1]) : alias(bn);
  const shape = full.slice();
  if (an.ndim === 1) shape.splice(shape.length - 2, 1);
  if (bn.ndim === 1) shape.splice(shape.length - 1, 1);
  // The product is pending (fusion/pending.ts): elementwise ops on it fold into its epilogue.
  const out = new PendingResult(matmulKernel, [alias(a2), alias(b2)], null, [], shape, full);
  const swap = (x: NDArray) => {
    const order = [...x.shape.keys()];
    order.push(...order.splice(-2).reverse());
    return x.permute(order);
  };
  const storedTransposed = an.ndim === 2 && bn.ndim === 2 && !b2.view.isPlain && isPlainTransposed(b2);
  const backwardWith = (g: NDArray, epis: readonly (GradEpilogue | undefined)[]): (NDArray | null)[] => {
    const g2 = g.reshape(fullShape(shape, an.ndim, bn.ndim));
    const res: (NDArray | null)[] = [null, null];
    if (a.requiresGrad) {
      const bt = swap(b2);
      // A ReLU (or other one-gradient elementwise op) that made `a` applies its backward here.
      res[0] = matmulGrad(g2, bt, epis[0], an.shape, (ga) => (an.ndim === 1 ? dropDim(ga, ga.ndim - 2) : ga));
      bt.dispose();
    }
    if (b.requiresGrad && !epis[1] && storedTransposed) {
      // b is a transposed view (x.matmul(W.T)): compute gbᵀ = gᵀ·a, which is W's own layout,
      // so the gradient reaching W through the transpose needs no copy.
      const gt = swap(g2);
      const gbt = gt.matmul(a2);
      gt.dispose();
      res[1] = swap(gbt);
      gbt.dispose();
    } else if (b.requiresGrad) {
      const at = swap(a2);
      res[1] = matmulGrad(at, g2, epis[1], bn.shape, (gb) => (bn.ndim === 1 ? dropDim(gb, gb.ndim - 1) : gb));
      at.dispose();
    }
    g2.dispose();
    return res;
  };
  const t = fromOp(op, out, [a, b], (g) => backwardWith(g, []), [a2, b2]);
  if (t._node) t._node.backwardWith = backwardWith;
  return t;
}

function isPlainTransposed(x: NDArray): boolean {
  const t = x.permute([1, 0]);
  const plain = t.view.isPlain && !t.view.mask;
  t.dispose();
  return plain;
}

/** The result shape with the unit dims of 1-d operands put back. */
function fullShape(shape: readonly number[], aNd: number, bNd: number): number[] {
  const s = shape.slice();
  if (aNd === 1) s.splice(bNd === 1 ? s.length : s.length - 1, 0, 1);
  if (bNd === 1) s.push(1);
  return s;
}

function dropDim(x: NDArray, d: number): NDArray {
  const r = x.reshape(x.shape.filter((_, i) => i !== d));
  x.dispose();
  return r;
}

export function dot(a: Tensor, b: Tensor): Tensor {
  checkTensor('dot', b, 'the right operand');
  if (a.ndim !== 1 || b.ndim !== 1 || a.shape[0] !== b.shape[0]) {
    throw new ShapeError(
      `dot: got shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)}; expected two 1-d tensors of the same length`,
    );
  }
  return matmul(a, b, 'dot');
}
