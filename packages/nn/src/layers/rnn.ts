import { OptionSpec, ShapeError, ValueError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, cat, linear, stack, zeros } from '@surf/autograd';
import { uniform } from '../init';
import { Module, parameter } from '../module';
import { dropout } from '../functional/dropout';
import { RnnNonlinearity, gruStep, lstmStep, rnnStep } from './rnn-steps';

export interface RNNOptions {
  /** Stacked layers (default 1). */
  numLayers?: number;
  /** Biases b_ih and b_hh (default true). */
  bias?: boolean;
  /** Input and output are [N, L, H] (default false: [L, N, H], as PyTorch). The states stay [layers·D, N, H]. */
  batchFirst?: boolean;
  /** Dropout on each layer's output but the last, while training (default 0). */
  dropout?: number;
  /** A second, reversed pass per layer, concatenated on the feature dim (default false). */
  bidirectional?: boolean;
}

type Mode = 'RNN' | 'LSTM' | 'GRU';
const GATES: Record<Mode, number> = { RNN: 1, LSTM: 4, GRU: 3 };
const SPEC: OptionSpec<RNNOptions> = {
  numLayers: 'posint',
  bias: 'boolean',
  batchFirst: 'boolean',
  dropout: (v: unknown, where: string) => {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      throw new ValueError(`${where} must be a probability in [0, 1]; got ${String(v)}`);
  },
  bidirectional: 'boolean',
};
const DEFAULTS: Required<RNNOptions> = {
  numLayers: 1,
  bias: true,
  batchFirst: false,
  dropout: 0,
  bidirectional: false,
};

interface LayerParams {
  wih: Tensor;
  whh: Tensor;
  bih: Tensor | null;
  bhh: Tensor | null;
}

/**
 * The shared multi-layer driver of RNN, LSTM and GRU. Parameters are fields named as PyTorch's
 * (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, `..._reverse` for the backward
 * direction) in PyTorch's order, so state dicts port both ways. Per layer and direction the
 * input projection of the whole sequence is one matmul; each step adds one for the hidden state.
 */
abstract class RNNBase extends Module {
  readonly numLayers: number;
  readonly bias: boolean;
  readonly batchFirst: boolean;
  readonly dropout: number;
  readonly bidirectional: boolean;

  constructor(
    private readonly mode: Mode,
    readonly inputSize: number,
    readonly hiddenSize: number,
    o: Required<RNNOptions>,
  ) {
    super();
    const name = mode;
    for (const [k, v] of [
      ['inputSize', inputSize],
      ['hiddenSize', hiddenSize],
    ] as const)
      if (!Number.isInteger(v) || v < 1) throw new ValueError(`${name}: ${k} must be a positive integer; got ${v}`);
    this.numLayers = o.numLayers;
    this.bias = o.bias;
    this.batchFirst = o.batchFirst;
    this.dropout = o.dropout;
    this.bidirectional = o.bidirectional;
    // PyTorch's reset_parameters: every weight and bias from U(±1/√hidden).
    const k = 1 / Math.sqrt(hiddenSize);
    const G = GATES[mode] * hiddenSize;
    const D = this.bidirectional ? 2 : 1;
    const self = this as unknown as Record<string, Tensor>;
    for (let l = 0; l < this.numLayers; l++) {
      for (let d = 0; d < D; d++) {
        const sfx = `_l${l}${d ? '_reverse' : ''}`;
        const inSize = l === 0 ? inputSize : hiddenSize * D;
        self[`weight_ih${sfx}`] = parameter(uniform(zeros([G, inSize]), -k, k));
        self[`weight_hh${sfx}`] = parameter(uniform(zeros([G, hiddenSize]), -k, k));
        if (this.bias) {
          self[`bias_ih${sfx}`] = parameter(uniform(zeros([G]), -k, k));
          self[`bias_hh${sfx}`] = parameter(uniform(zeros([G]), -k, k));
        }
      }
    }
  }

  private layerParams(l: number, reverse: boolean): LayerParams {
    const self = this as unknown as Record<string, Tensor>;
    const sfx = `_l${l}${reverse ? '_reverse' : ''}`;
    return {
      wih: self[`weight_ih${sfx}`],
      whh: self[`weight_hh${sfx}`],
      bih: this.bias ? self[`bias_ih${sfx}`] : null,
      bhh: this.bias ? self[`bias_hh${sfx}`] : null,
    };
  }

  protected nonlinearity(): RnnNonlinearity {
    return 'tanh';
  }

  /** Checks a state against [layers·D, N, H] (or [layers·D, H] unbatched) and adds the batch dim. */
  private state(what: string, s: Tensor | null | undefined, batched: boolean, N: number): Tensor {
    const D = this.bidirectional ? 2 : 1;
    const want = batched ? [this.numLayers * D, N, this.hiddenSize] : [this.numLayers * D, this.hiddenSize];
    if (s === null || s === undefined) return zeros([this.numLayers * D, N, this.hiddenSize]);
    if (!(s instanceof Tensor))
      throw new ValueError(`${this.constructor.name}.forward: ${what} must be a Tensor; got ${typeof s}`);
    if (s.ndim !== want.length || s.shape.some((v, i) => v !== want[i]))
      throw new ShapeError(
        `${this.constructor.name}.forward: ${what} has shape ${fmtShape(s.shape)}; expected ${fmtShape(want)} ([numLayers·numDirections, ${batched ? 'N, ' : ''}hiddenSize])`,
      );
    return batched ? s : s.unsqueeze(1);
  }

  /** Runs every layer; returns the output [L, N, D·H] (batch dim added) and final states per layer and direction. */
  protected run(
    input: Tensor,
    h0: Tensor | null | undefined,
    c0: Tensor | null | undefined,
  ): { out: Tensor; h: Tensor; c: Tensor | null } {
    const name = `${this.constructor.name}.forward`;
    if (!(input instanceof Tensor)) throw new ValueError(`${name}: the input must be a Tensor; got ${typeof input}`);
    if ((input.ndim !== 2 && input.ndim !== 3) || input.shape[input.ndim - 1] !== this.inputSize)
      throw new ShapeError(
        `${name}: the input has shape ${fmtShape(input.shape)}; expected ${this.batchFirst ? '[N, L, inputSize]' : '[L, N, inputSize]'} or unbatched [L, inputSize] with inputSize = ${this.inputSize}`,
      );
    const batched = input.ndim === 3;
    let x = batched ? (this.batchFirst ? input.transpose(0, 1) : input) : input.unsqueeze(1);
    const [L, N] = x.shape;
    const D = this.bidirectional ? 2 : 1;
    const hs0 = this.state('h0', h0, batched, N);
    const cs0 = this.mode === 'LSTM' ? this.state('c0', c0, batched, N) : null;
    const hN: Tensor[] = [];
    const cN: Tensor[] = [];
    for (let l = 0; l < this.numLayers; l++) {
      const outs: Tensor[] = [];
      for (let d = 0; d < D; d++) {
        const p = this.layerParams(l, d === 1);
        const xp = linear(x, p.wih, p.bih); // [L, N, G·H]: the whole sequence in one matmul
        let h = hs0.index(l * D + d);
        let c = cs0 ? cs0.index(l * D + d) : null;
        const ys: Tensor[] = new Array<Tensor>(L);
        for (let s = 0; s < L; s++) {
          const t = d === 1 ? L - 1 - s : s;
          const xt = xp.index(t);
          if (this.mode === 'LSTM') [h, c] = lstmStep(xt, h, c!, p.whh, p.bhh);
          else if (this.mode === 'GRU') h = gruStep(xt, h, p.whh, p.bhh);
          else h = rnnStep(xt, h, p.whh, p.bhh, this.nonlinearity());
          ys[t] = h;
        }
        outs.push(stack(ys, 0));
        hN.push(h);
        if (c) cN.push(c);
      }
      x = D === 2 ? cat(outs, -1) : outs[0];
      if (this.dropout > 0 && l < this.numLayers - 1) x = dropout(x, this.dropout, this.training);
    }
    const out = batched ? (this.batchFirst ? x.transpose(0, 1) : x) : x.squeeze(1);
    const hOut = stack(hN, 0);
    const cOut = cN.length ? stack(cN, 0) : null;
    return {
      out,
      h: batched ? hOut : hOut.squeeze(1),
      c: cOut && (batched ? cOut : cOut.squeeze(1)),
    };
  }

  protected override extraRepr(): string {
    const parts = [`${this.inputSize}, ${this.hiddenSize}`];
    if (this.numLayers !== 1) parts.push(`numLayers=${this.numLayers}`);
    if (!this.bias) parts.push('bias=false');
    if (this.batchFirst) parts.push('batchFirst=true');
    if (this.dropout) parts.push(`dropout=${this.dropout}`);
    if (this.bidirectional) parts.push('bidirectional=true');
    return parts.join(', ');
  }
}

export interface ElmanRNNOptions extends RNNOptions {
  /** 'tanh' (default) or 'relu'. */
  nonlinearity?: RnnNonlinearity;
}

/**
 * PyTorch's nn.RNN: h_t = act(x_t·W_ihᵀ + b_ih + h_{t−1}·W_hhᵀ + b_hh). forward(input, h0?)
 * returns [output, hN]: output [L, N, D·H] (batchFirst: [N, L, D·H]), hN [numLayers·D, N, H].
 */
export class RNN extends RNNBase {
  readonly nonlinearityName: RnnNonlinearity;
  constructor(inputSize: number, hiddenSize: number, opts: ElmanRNNOptions = {}) {
    const o = withDefaults<Required<ElmanRNNOptions>>(
      'RNN',
      opts,
      { ...SPEC, nonlinearity: ['tanh', 'relu'] },
      { ...DEFAULTS, nonlinearity: 'tanh' },
    );
    super('RNN', inputSize, hiddenSize, o);
    this.nonlinearityName = o.nonlinearity;
  }
  protected override nonlinearity(): RnnNonlinearity {
    return this.nonlinearityName;
  }
  forward(input: Tensor, h0?: Tensor | null): [Tensor, Tensor] {
    const r = this.run(input, h0, null);
    return [r.out, r.h];
  }
  protected override extraRepr(): string {
    return super.extraRepr() + (this.nonlinearityName === 'relu' ? ", nonlinearity='relu'" : '');
  }
}

/**
 * PyTorch's nn.LSTM (gates i, f, g, o). forward(input, [h0, c0]?) returns
 * [output, [hN, cN]], each state [numLayers·D, N, H].
 */
export class LSTM extends RNNBase {
  constructor(inputSize: number, hiddenSize: number, opts: RNNOptions = {}) {
    super('LSTM', inputSize, hiddenSize, withDefaults<Required<RNNOptions>>('LSTM', opts, SPEC, DEFAULTS));
  }
  forward(input: Tensor, state?: readonly [Tensor, Tensor] | null): [Tensor, [Tensor, Tensor]] {
    if (state !== undefined && state !== null && (!Array.isArray(state) || state.length !== 2))
      throw new ValueError('LSTM.forward: the state must be a pair [h0, c0] (or omitted for zeros)');
    const r = this.run(input, state?.[0], state?.[1]);
    return [r.out, [r.h, r.c!]];
  }
}

/** PyTorch's nn.GRU (gates r, z, n). forward(input, h0?) returns [output, hN]. */
export class GRU extends RNNBase {
  constructor(inputSize: number, hiddenSize: number, opts: RNNOptions = {}) {
    super('GRU', inputSize, hiddenSize, withDefaults<Required<RNNOptions>>('GRU', opts, SPEC, DEFAULTS));
  }
  forward(input: Tensor, h0?: Tensor | null): [Tensor, Tensor] {
    const r = this.run(input, h0, null);
    return [r.out, r.h];
  }
}
