import { withDefaults } from '@surf/core';
import { Tensor, checkTensor } from '@surf/autograd';

/**
 * x1·x2 / max(‖x1‖·‖x2‖, eps) along `dim` (defaults dim = 1, eps = 1e-8), the inputs
 * broadcast; PyTorch's cosine_similarity (which clamps the product of the norms).
 */
export function cosineSimilarity(x1: Tensor, x2: Tensor, opts: { dim?: number; eps?: number } = {}): Tensor {
  const o = withDefaults('cosineSimilarity', opts, { dim: 'int', eps: 'nonnegative' }, { dim: 1, eps: 1e-8 });
  checkTensor('cosineSimilarity', x1, 'x1');
  checkTensor('cosineSimilarity', x2, 'x2');
  const n1 = x1.mul(x1).sum(o.dim);
  const n2 = x2.mul(x2).sum(o.dim);
  return x1
    .mul(x2)
    .sum(o.dim)
    .div(
      n1
        .mul(n2)
        .clamp(o.eps * o.eps, null)
        .sqrt(),
    );
}

/** ‖x1 − x2 + eps‖_p over the last dim (defaults p = 2, eps = 1e-6, keepdim false), as PyTorch. */
export function pairwiseDistance(
  x1: Tensor,
  x2: Tensor,
  opts: { p?: number; eps?: number; keepdim?: boolean } = {},
): Tensor {
  const o = withDefaults(
    'pairwiseDistance',
    opts,
    { p: 'positive', eps: 'nonnegative', keepdim: 'boolean' },
    { p: 2, eps: 1e-6, keepdim: false },
  );
  checkTensor('pairwiseDistance', x1, 'x1');
  checkTensor('pairwiseDistance', x2, 'x2');
  return x1.sub(x2).add(o.eps).norm(o.p, -1, o.keepdim);
}
