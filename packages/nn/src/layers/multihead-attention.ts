import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, linear, scaledDotProductAttention, tensor, where, zeros } from '@surf/autograd';
import { constant, xavierUniform } from '../init';
import { Module, parameter } from '../module';
import { Linear } from './linear';

export interface MultiheadAttentionOptions {
  /** Biases on the input and output projections (default true). */
  bias?: boolean;
  /** Dropout on the attention weights while training (default 0). */
  dropout?: number;
  /** Inputs and output are [N, L, E] when true; default false: [L, N, E], as PyTorch's. */
  batchFirst?: boolean;
}

export interface MultiheadAttentionForwardOptions {
  /** [L, S] or [N·numHeads, L, S]; bool: true = NOT allowed (PyTorch's MHA convention), float: added. */
  attnMask?: Tensor | null;
  /** [N, S] (or [S] unbatched); bool: true = ignore that key, float: added. */
  keyPaddingMask?: Tensor | null;
  /** Hide future keys (key j from query i when j > i). */
  isCausal?: boolean;
}

/**
 * PyTorch's nn.MultiheadAttention with the same parameter names in the state dict
 * (in_proj_weight [3E, E], in_proj_bias [3E], out_proj.weight, out_proj.bias), so weights
 * load as-is. forward returns the attention output only (PyTorch's need_weights=False):
 * the fused attention never forms the weights.
 */
export class MultiheadAttention extends Module {
  /* eslint-disable @typescript-eslint/naming-convention -- PyTorch's state-dict names */
  readonly in_proj_weight: Tensor;
  readonly in_proj_bias: Tensor | null;
  readonly out_proj: Linear;
  /* eslint-enable @typescript-eslint/naming-convention */
  readonly headDim: number;
  readonly dropout: number;
  readonly batchFirst: boolean;

  constructor(
    readonly embedDim: number,
    readonly numHeads: number,
    opts: MultiheadAttentionOptions = {},
  ) {
    super();
    opts = parseOptions<MultiheadAttentionOptions>('MultiheadAttention', opts, {
      bias: 'boolean',
      dropout: 'probability',
      batchFirst: 'boolean',
    });
    if (!Number.isInteger(embedDim) || embedDim <= 0)
      throw new ValueError(`MultiheadAttention: embedDim must be a positive integer; got ${embedDim}`);
    if (!Number.isInteger(numHeads) || numHeads <= 0)
      throw new ValueError(`MultiheadAttention: numHeads must be a positive integer; got ${numHeads}`);
    if (embedDim % numHeads !== 0)
      throw new ValueError(`MultiheadAttention: embedDim ${embedDim} is not divisible by numHeads ${numHeads}`);
    const dropout = opts.dropout ?? 0;
    if (typeof dropout !== 'number' || !(dropout >= 0 && dropout <= 1))
      throw new ValueError(`MultiheadAttention: dropout must be a probability in [0, 1]; got ${dropout}`);
    this.headDim = embedDim / numHeads;
    this.dropout = dropout;
    this.batchFirst = opts.batchFirst ?? false;
    const bias = opts.bias ?? true;
    // PyTorch's _reset_parameters: xavier-uniform in_proj, zero biases, out_proj as a Linear.
    this.in_proj_weight = parameter(xavierUniform(zeros([3 * embedDim, embedDim])));
    this.in_proj_bias = bias ? parameter(zeros([3 * embedDim])) : null;
    this.out_proj = new Linear(embedDim, embedDim, { bias });
    if (this.out_proj.bias) constant(this.out_proj.bias, 0);
  }

  /** Self-attention when key and value are omitted. */
  forward(query: Tensor, key?: Tensor, value?: Tensor, opts: MultiheadAttentionForwardOptions = {}): Tensor {
    opts = parseOptions<MultiheadAttentionForwardOptions>('MultiheadAttention.forward', opts, {
      attnMask: 'any',
      keyPaddingMask: 'any',
      isCausal: 'boolean',
    });
    key ??= query;
    value ??= key;
    const E = this.embedDim,
      H = this.numHeads,
      Dh = this.headDim;
    const unbatched = query.ndim === 2;
    for (const [name, t] of [
      ['query', query],
      ['key', key],
      ['value', value],
    ] as const) {
      if (t.ndim !== query.ndim || (t.ndim !== 2 && t.ndim !== 3) || t.shape[t.ndim - 1] !== E) {
        throw new ShapeError(
          `MultiheadAttention: ${name} has shape ${fmtShape(t.shape)}; expected ${this.batchFirst ? '[N, L, E]' : '[L, N, E]'} or unbatched [L, E] with E = embedDim = ${E}, all inputs of the same rank`,
        );
      }
    }
    // Work in [N, L, E].
    const toNLE = (t: Tensor) => (unbatched ? t.unsqueeze(0) : this.batchFirst ? t : t.transpose(0, 1));
    const q0 = toNLE(query),
      k0 = toNLE(key),
      v0 = toNLE(value);
    const [N, L] = q0.shape,
      S = k0.shape[1];
    if (k0.shape[0] !== N || v0.shape[0] !== N || v0.shape[1] !== S) {
      throw new ShapeError(
        `MultiheadAttention: query ${fmtShape(query.shape)}, key ${fmtShape(key.shape)} and value ${fmtShape(value.shape)} disagree on the batch size or the key count`,
      );
    }
    const w = this.in_proj_weight,
      b = this.in_proj_bias;
    const part = (t: Tensor | null, i: number) => (t ? t.narrow(0, i * E, E) : null);
    let q: Tensor, k: Tensor, v: Tensor;
    if (query === key && key === value) {
      // Self-attention: one [N, L, 3E] projection, split by views.
      const qkv = linear(q0, w, b);
      [q, k, v] = [0, 1, 2].map((i) => qkv.narrow(2, i * E, E));
    } else {
      q = linear(q0, part(w, 0)!, part(b, 0));
      k = linear(k0, part(w, 1)!, part(b, 1));
      v = linear(v0, part(w, 2)!, part(b, 2));
    }
    const heads = (t: Tensor, n: number) => t.reshape([N, n, H, Dh]).permute([0, 2, 1, 3]);
    const mask = this.combinedMask(opts, N, L, S, unbatched);
    const causal = !!opts.isCausal && !mask;
    let attnMask = mask;
    if (opts.isCausal && mask) attnMask = mask.add(causalBias(L, S));
    const o = scaledDotProductAttention(heads(q, L), heads(k, S), heads(v, S), {
      attnMask,
      causal,
      dropoutP: this.training ? this.dropout : 0,
    });
    let out = this.out_proj.forward(o.permute([0, 2, 1, 3]).reshape([N, L, E]));
    if (unbatched) out = out.squeeze(0);
    else if (!this.batchFirst) out = out.transpose(0, 1);
    return out;
  }

  /** attnMask and keyPaddingMask as one float mask broadcastable to [N, H, L, S], or null. */
  private combinedMask(
    opts: MultiheadAttentionForwardOptions,
    N: number,
    L: number,
    S: number,
    unbatched: boolean,
  ): Tensor | null {
    const asFloat = (m: Tensor) => (m.dtype === 'bool' ? where(m, -Infinity, 0) : m);
    let out: Tensor | null = null;
    const am = opts.attnMask ?? null;
    if (am) {
      if (am.ndim === 2 && am.shape[0] === L && am.shape[1] === S) out = asFloat(am);
      else if (am.ndim === 3 && am.shape[0] === N * this.numHeads && am.shape[1] === L && am.shape[2] === S)
        out = asFloat(am).reshape([N, this.numHeads, L, S]);
      else
        throw new ShapeError(
          `MultiheadAttention: attnMask has shape ${fmtShape(am.shape)}; expected ${fmtShape([L, S])} or ${fmtShape([N * this.numHeads, L, S])} ([L, S] or [N·numHeads, L, S])`,
        );
    }
    const kp = opts.keyPaddingMask ?? null;
    if (kp) {
      const want = unbatched ? [S] : [N, S];
      if (kp.ndim !== want.length || kp.shape.some((d, i) => d !== want[i]))
        throw new ShapeError(
          `MultiheadAttention: keyPaddingMask has shape ${fmtShape(kp.shape)}; expected ${fmtShape(want)}`,
        );
      const f = asFloat(kp).reshape([N, 1, 1, S]);
      out = out ? out.add(f) : f;
    }
    return out;
  }

  protected override extraRepr(): string {
    return `embedDim=${this.embedDim}, numHeads=${this.numHeads}, dropout=${this.dropout}, batchFirst=${this.batchFirst}`;
  }
}

/** 0 where key j is visible to query i (j <= i), -inf above the diagonal, as an [L, S] tensor. */
function causalBias(L: number, S: number): Tensor {
  const data = new Float32Array(L * S);
  for (let i = 0; i < L; i++) for (let j = i + 1; j < S; j++) data[i * S + j] = -Infinity;
  return tensor(data).reshape([L, S]);
}
