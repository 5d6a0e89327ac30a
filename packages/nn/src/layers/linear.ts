import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { LinearActivation, Tensor, checkTensor, linear, zeros } from '@surf/autograd';
import { kaimingUniform, uniform } from '../init';
import { Module, parameter } from '../module';

/** y = x·Wᵀ + b over the last dim; W is [out, in] as in PyTorch, so weights load as-is. */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;

  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    opts: { bias?: boolean } = {},
  ) {
    super();
    parseOptions('Linear', opts, { bias: 'boolean' });
    for (const [k, v] of [
      ['inFeatures', inFeatures],
      ['outFeatures', outFeatures],
    ] as const) {
      if (!Number.isInteger(v) || v < 0) throw new ValueError(`Linear: ${k} must be a non-negative integer; got ${v}`);
    }
    // PyTorch's reset_parameters: kaiming_uniform(a=√5) is U(±1/√in); the bias the same bound.
    this.weight = parameter(kaimingUniform(zeros([outFeatures, inFeatures]), { a: Math.sqrt(5) }));
    const bound = inFeatures > 0 ? 1 / Math.sqrt(inFeatures) : 0;
    this.bias = opts.bias === false ? null : parameter(uniform(zeros([outFeatures]), -bound, bound));
  }

  forward(x: Tensor): Tensor {
    return this.forwardWith(x, 'none');
  }

  /**
   * act(x·Wᵀ + b) (autograd's `linear`). Kept for callers that name the activation; a ReLU
   * module (or `.relu()`) after forward() fuses the same way, by autograd's fusion pass.
   */
  forwardWith(x: Tensor, activation: LinearActivation): Tensor {
    checkTensor('Linear.forward', x, 'the input');
    if (x.ndim < 1 || x.shape[x.ndim - 1] !== this.inFeatures) {
      throw new ShapeError(
        `Linear: input has shape ${fmtShape(x.shape)}; expected the last dim to be inFeatures = ${this.inFeatures}`,
      );
    }
    return linear(x, this.weight, this.bias, activation);
  }

  protected override extraRepr(): string {
    return `inFeatures=${this.inFeatures}, outFeatures=${this.outFeatures}, bias=${this.bias !== null}`;
  }
}
