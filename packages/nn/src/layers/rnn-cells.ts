import { ShapeError, ValueError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, linear, zeros } from '@surf/autograd';
import { uniform } from '../init';
import { Module, parameter } from '../module';
import { RnnNonlinearity, gruStep, lstmStep, rnnStep } from './rnn-steps';

/**
 * One step of a recurrent layer (PyTorch's nn.RNNCell, LSTMCell, GRUCell), with the parameter
 * names `weight_ih`, `weight_hh`, `bias_ih`, `bias_hh` and PyTorch's initialisation U(±1/√hidden).
 * Inputs are [N, inputSize] or unbatched [inputSize]; a missing state is zeros.
 */
abstract class CellBase extends Module {
  /* eslint-disable @typescript-eslint/naming-convention -- PyTorch's state-dict names */
  readonly weight_ih: Tensor;
  readonly weight_hh: Tensor;
  readonly bias_ih: Tensor | null;
  readonly bias_hh: Tensor | null;
  /* eslint-enable @typescript-eslint/naming-convention */

  constructor(
    readonly inputSize: number,
    readonly hiddenSize: number,
    readonly bias: boolean,
    gates: number,
  ) {
    super();
    for (const [k, v] of [
      ['inputSize', inputSize],
      ['hiddenSize', hiddenSize],
    ] as const)
      if (!Number.isInteger(v) || v < 1)
        throw new ValueError(`${this.constructor.name}: ${k} must be a positive integer; got ${v}`);
    const k = 1 / Math.sqrt(hiddenSize);
    this.weight_ih = parameter(uniform(zeros([gates * hiddenSize, inputSize]), -k, k));
    this.weight_hh = parameter(uniform(zeros([gates * hiddenSize, hiddenSize]), -k, k));
    this.bias_ih = bias ? parameter(uniform(zeros([gates * hiddenSize]), -k, k)) : null;
    this.bias_hh = bias ? parameter(uniform(zeros([gates * hiddenSize]), -k, k)) : null;
  }

  /** The input projection, and whether the input was batched. */
  protected project(input: Tensor): [Tensor, boolean] {
    const name = `${this.constructor.name}.forward`;
    if (!(input instanceof Tensor)) throw new ValueError(`${name}: the input must be a Tensor; got ${typeof input}`);
    if ((input.ndim !== 1 && input.ndim !== 2) || input.shape[input.ndim - 1] !== this.inputSize)
      throw new ShapeError(
        `${name}: the input has shape ${fmtShape(input.shape)}; expected [N, ${this.inputSize}] or [${this.inputSize}]`,
      );
    const batched = input.ndim === 2;
    return [linear(batched ? input : input.unsqueeze(0), this.weight_ih, this.bias_ih), batched];
  }

  protected state(what: string, s: Tensor | null | undefined, batched: boolean, N: number): Tensor {
    if (s === null || s === undefined) return zeros([N, this.hiddenSize]);
    const want = batched ? [N, this.hiddenSize] : [this.hiddenSize];
    if (!(s instanceof Tensor) || s.ndim !== want.length || s.shape.some((v, i) => v !== want[i]))
      throw new ShapeError(
        `${this.constructor.name}.forward: ${what} has shape ${s instanceof Tensor ? fmtShape(s.shape) : typeof s}; expected ${fmtShape(want)}`,
      );
    return batched ? s : s.unsqueeze(0);
  }

  protected override extraRepr(): string {
    return `${this.inputSize}, ${this.hiddenSize}${this.bias ? '' : ', bias=false'}`;
  }
}

/** h' = act(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh); options { bias = true, nonlinearity = 'tanh' }. */
export class RNNCell extends CellBase {
  readonly nonlinearity: RnnNonlinearity;
  constructor(inputSize: number, hiddenSize: number, opts: { bias?: boolean; nonlinearity?: RnnNonlinearity } = {}) {
    const o = withDefaults(
      'RNNCell',
      opts,
      { bias: 'boolean', nonlinearity: ['tanh', 'relu'] },
      { bias: true, nonlinearity: 'tanh' as RnnNonlinearity },
    );
    super(inputSize, hiddenSize, o.bias, 1);
    this.nonlinearity = o.nonlinearity;
  }
  forward(input: Tensor, h?: Tensor | null): Tensor {
    const [xp, batched] = this.project(input);
    const h1 = rnnStep(xp, this.state('h', h, batched, xp.shape[0]), this.weight_hh, this.bias_hh, this.nonlinearity);
    return batched ? h1 : h1.squeeze(0);
  }
}

/** One LSTM step: forward(input, [h, c]?) returns [h', c']. Options { bias = true }. */
export class LSTMCell extends CellBase {
  constructor(inputSize: number, hiddenSize: number, opts: { bias?: boolean } = {}) {
    super(inputSize, hiddenSize, withDefaults('LSTMCell', opts, { bias: 'boolean' }, { bias: true }).bias, 4);
  }
  forward(input: Tensor, state?: readonly [Tensor, Tensor] | null): [Tensor, Tensor] {
    if (state !== undefined && state !== null && (!Array.isArray(state) || state.length !== 2))
      throw new ValueError('LSTMCell.forward: the state must be a pair [h, c] (or omitted for zeros)');
    const [xp, batched] = this.project(input);
    const N = xp.shape[0];
    const [h, c] = lstmStep(
      xp,
      this.state('h', state?.[0], batched, N),
      this.state('c', state?.[1], batched, N),
      this.weight_hh,
      this.bias_hh,
    );
    return batched ? [h, c] : [h.squeeze(0), c.squeeze(0)];
  }
}

/** One GRU step: forward(input, h?) returns h'. Options { bias = true }. */
export class GRUCell extends CellBase {
  constructor(inputSize: number, hiddenSize: number, opts: { bias?: boolean } = {}) {
    super(inputSize, hiddenSize, withDefaults('GRUCell', opts, { bias: 'boolean' }, { bias: true }).bias, 3);
  }
  forward(input: Tensor, h?: Tensor | null): Tensor {
    const [xp, batched] = this.project(input);
    const h1 = gruStep(xp, this.state('h', h, batched, xp.shape[0]), this.weight_hh, this.bias_hh);
    return batched ? h1 : h1.squeeze(0);
  }
}
