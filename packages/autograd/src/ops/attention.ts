import { DTypeError, NDArray, ValueError, attentionBackwardNd, attentionNd, parseOptions } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { where } from './arith';
import { rand } from '../random';

export interface ScaledDotProductAttentionOptions {
  /** bool (true = may attend) or float32 (added to the scores), broadcastable to [..., L, S]. */
  attnMask?: Tensor | null;
  /** Hide key j from query i when j > i (top-left aligned, PyTorch's is_causal). */
  causal?: boolean;
  /** Probability of zeroing each attention weight (applied whenever > 0, as PyTorch). */
  dropoutP?: number;
  /** Multiplies q·kᵀ; default 1/sqrt(E). */
  scale?: number | null;
}

/**
 * PyTorch's F.scaled_dot_product_attention: softmax(q·kᵀ·scale + mask)·v over q [..., L, E],
 * k [..., S, E], v [..., S, Ev] (batch dims broadcast). The fused backend op runs it without
 * storing the L x S scores, and its backward recomputes them from the saved logsumexp. Dropout
 * and a float mask that requires grad take the composite path (matmul, softmax, matmul).
 * A query row with every key hidden gives 0 (PyTorch's safe softmax), not NaN.
 */
export function scaledDotProductAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  options?: ScaledDotProductAttentionOptions,
): Tensor {
  const op = 'scaledDotProductAttention';
  const o = parseOptions<ScaledDotProductAttentionOptions>(op, options, {
    attnMask: 'any',
    causal: 'boolean',
    dropoutP: 'probability',
    scale: 'any',
  });
  [q, k, v].forEach((x, i) => {
    checkTensor(op, x, ['q', 'k', 'v'][i]);
    if (x.dtype !== 'float32')
      throw new DTypeError(`${op}: ${['q', 'k', 'v'][i]} has dtype ${x.dtype}; expected float32`);
  });
  const mask = o.attnMask ?? null;
  if (mask !== null) {
    checkTensor(op, mask, 'attnMask');
    if (mask.dtype !== 'bool' && mask.dtype !== 'float32')
      throw new DTypeError(
        `${op}: attnMask has dtype ${mask.dtype}; expected bool (true = attend) or float32 (added to the scores)`,
      );
  }
  const causal = o.causal ?? false;
  if (typeof causal !== 'boolean')
    throw new ValueError(`${op}: causal must be a boolean; got ${JSON.stringify(causal)}`);
  if (causal && mask)
    throw new ValueError(
      `${op}: got both attnMask and causal: true; pass one (fold the causal pattern into the mask), as PyTorch`,
    );
  const dropoutP = o.dropoutP ?? 0;
  if (typeof dropoutP !== 'number' || !(dropoutP >= 0 && dropoutP <= 1))
    throw new ValueError(`${op}: dropoutP must be a probability in [0, 1]; got ${dropoutP}`);
  const E = q.shape[q.ndim - 1] ?? 0;
  if (E === 0 && (o.scale === undefined || o.scale === null))
    throw new ValueError(
      `${op}: q and k have head dim E = 0, so the default scale 1/sqrt(E) is undefined; expected E >= 1 (or pass scale)`,
    );
  const scale = o.scale ?? 1 / Math.sqrt(E);
  if (typeof scale !== 'number' || !Number.isFinite(scale))
    throw new ValueError(`${op}: scale must be a finite number; got ${scale}`);
  if (dropoutP > 0 || mask?.requiresGrad) return composite(q, k, v, mask, causal, dropoutP, scale);

  const qn = q.nd(op),
    kn = k.nd(op),
    vn = v.nd(op);
  const mn = mask?.nd(op) ?? null;
  const { out, lse } = attentionNd(qn, kn, vn, { scale, causal, mask: mn });
  const saved = [alias(qn), alias(kn), alias(vn), alias(out), lse, ...(mn ? [alias(mn)] : [])];
  return fromOp(
    op,
    out,
    [q, k, v],
    (g) => {
      const [sq, sk, sv, so, sl, sm] = saved;
      const d = attentionBackwardNd(sq, sk, sv, so, sl, g, { scale, causal, mask: sm ?? null });
      return [d.dq, d.dk, d.dv];
    },
    saved,
  );
}

/** The plain formula with autograd's own ops: for dropout and for a mask that needs a gradient. */
function composite(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  mask: Tensor | null,
  causal: boolean,
  dropoutP: number,
  scale: number,
): Tensor {
  let s = q.matmul(k.transpose(-2, -1)).mul(scale);
  if (causal) {
    const [L, S] = s.shape.slice(-2);
    const tri = new Uint8Array(L * S);
    for (let i = 0; i < L; i++) for (let j = 0; j <= Math.min(i, S - 1); j++) tri[i * S + j] = 1;
    const keep = Tensor.fromNDArray(NDArray.fromData(s.ndarray.backend, tri, [L, S], 'bool'));
    s = where(keep, s, -Infinity);
  } else if (mask) {
    s = mask.dtype === 'bool' ? where(mask, s, -Infinity) : s.add(mask);
  }
  let p = s.softmax(-1);
  // A row with every key hidden is 0/0 = NaN: make it 0 as the fused path does.
  p = where(p.eq(p), p, 0);
  if (dropoutP > 0) p = dropoutP >= 1 ? p.mul(0) : where(rand(p.shape).ge(dropoutP), p.mul(1 / (1 - dropoutP)), 0);
  return p.matmul(v);
}
