import { ValueError, withDefaults } from '@surf/core';
import { Tensor, full } from '@surf/autograd';
import { Module, parameter } from '../module';
import * as F from '../functional/activations';

/**
 * PyTorch's remaining activation layers; each holds its options (checked and defaulted when
 * built) and forwards to the function of the same name in nn.functional.
 */

export class ELU extends Module {
  readonly alpha: number;
  constructor(opts: number | { alpha?: number } = {}) {
    super();
    this.alpha = withDefaults(
      'ELU',
      typeof opts === 'number' ? { alpha: opts } : opts,
      { alpha: 'finite' },
      { alpha: 1 },
    ).alpha;
  }
  forward(x: Tensor): Tensor {
    return F.elu(x, { alpha: this.alpha });
  }
  protected override extraRepr(): string {
    return `alpha=${this.alpha}`;
  }
}

export class SELU extends Module {
  forward(x: Tensor): Tensor {
    return F.selu(x);
  }
}

export class CELU extends Module {
  readonly alpha: number;
  constructor(opts: number | { alpha?: number } = {}) {
    super();
    this.alpha = withDefaults(
      'CELU',
      typeof opts === 'number' ? { alpha: opts } : opts,
      { alpha: 'finite' },
      { alpha: 1 },
    ).alpha;
    if (this.alpha === 0) throw new ValueError('CELU: alpha must not be 0; pass a nonzero alpha');
  }
  forward(x: Tensor): Tensor {
    return F.celu(x, { alpha: this.alpha });
  }
  protected override extraRepr(): string {
    return `alpha=${this.alpha}`;
  }
}

export class Softplus extends Module {
  readonly beta: number;
  readonly threshold: number;
  constructor(opts: number | { beta?: number; threshold?: number } = {}, threshold?: number) {
    super();
    const given = typeof opts === 'number' ? { beta: opts, threshold } : opts;
    const o = withDefaults('Softplus', given, { beta: 'positive', threshold: 'finite' }, { beta: 1, threshold: 20 });
    this.beta = o.beta;
    this.threshold = o.threshold;
  }
  forward(x: Tensor): Tensor {
    return F.softplus(x, { beta: this.beta, threshold: this.threshold });
  }
  protected override extraRepr(): string {
    return `beta=${this.beta}, threshold=${this.threshold}`;
  }
}

export class Mish extends Module {
  forward(x: Tensor): Tensor {
    return F.mish(x);
  }
}

/** Learnable negative slope: `weight` [numParameters] (1, or the channel count), starting at `init`. */
export class PReLU extends Module {
  readonly weight: Tensor;
  constructor(opts: number | { numParameters?: number; init?: number } = {}, init?: number) {
    super();
    const o = withDefaults(
      'PReLU',
      typeof opts === 'number' ? { numParameters: opts, init } : opts,
      { numParameters: 'posint', init: 'finite' },
      { numParameters: 1, init: 0.25 },
    );
    this.weight = parameter(full([o.numParameters], o.init));
  }
  forward(x: Tensor): Tensor {
    return F.prelu(x, this.weight);
  }
  protected override extraRepr(): string {
    return `numParameters=${this.weight.numel}`;
  }
}

export class Hardswish extends Module {
  forward(x: Tensor): Tensor {
    return F.hardswish(x);
  }
}

export class Hardsigmoid extends Module {
  forward(x: Tensor): Tensor {
    return F.hardsigmoid(x);
  }
}

export class ReLU6 extends Module {
  forward(x: Tensor): Tensor {
    return F.relu6(x);
  }
}

export class Softsign extends Module {
  forward(x: Tensor): Tensor {
    return F.softsign(x);
  }
}

export class Tanhshrink extends Module {
  forward(x: Tensor): Tensor {
    return F.tanhshrink(x);
  }
}

export class Hardtanh extends Module {
  readonly minVal: number;
  readonly maxVal: number;
  constructor(opts: number | { minVal?: number; maxVal?: number } = {}, maxVal?: number) {
    super();
    const given = typeof opts === 'number' ? { minVal: opts, maxVal } : opts;
    const o = withDefaults('Hardtanh', given, { minVal: 'finite', maxVal: 'finite' }, { minVal: -1, maxVal: 1 });
    if (!(o.maxVal > o.minVal))
      throw new ValueError(`Hardtanh: maxVal (${o.maxVal}) must be greater than minVal (${o.minVal})`);
    this.minVal = o.minVal;
    this.maxVal = o.maxVal;
  }
  forward(x: Tensor): Tensor {
    return F.hardtanh(x, { minVal: this.minVal, maxVal: this.maxVal });
  }
  protected override extraRepr(): string {
    return `minVal=${this.minVal}, maxVal=${this.maxVal}`;
  }
}

export class LogSigmoid extends Module {
  forward(x: Tensor): Tensor {
    return F.logsigmoid(x);
  }
}

export class Softshrink extends Module {
  readonly lambd: number;
  constructor(opts: number | { lambd?: number } = {}) {
    super();
    this.lambd = withDefaults(
      'Softshrink',
      typeof opts === 'number' ? { lambd: opts } : opts,
      { lambd: 'nonnegative' },
      { lambd: 0.5 },
    ).lambd;
  }
  forward(x: Tensor): Tensor {
    return F.softshrink(x, { lambd: this.lambd });
  }
}

export class Hardshrink extends Module {
  readonly lambd: number;
  constructor(opts: number | { lambd?: number } = {}) {
    super();
    this.lambd = withDefaults(
      'Hardshrink',
      typeof opts === 'number' ? { lambd: opts } : opts,
      { lambd: 'finite' },
      { lambd: 0.5 },
    ).lambd;
  }
  forward(x: Tensor): Tensor {
    return F.hardshrink(x, { lambd: this.lambd });
  }
}

/** x where x > threshold, else value (both required, as PyTorch). */
export class Threshold extends Module {
  constructor(
    readonly threshold: number,
    readonly value: number,
  ) {
    super();
    for (const [k, v] of [
      ['threshold', threshold],
      ['value', value],
    ] as const)
      if (typeof v !== 'number' || !Number.isFinite(v))
        throw new ValueError(`Threshold: ${k} must be a finite number; got ${String(v)}`);
  }
  forward(x: Tensor): Tensor {
    return F.threshold(x, this.threshold, this.value);
  }
  protected override extraRepr(): string {
    return `threshold=${this.threshold}, value=${this.value}`;
  }
}

/** softmax(−x) over `dim` (default the last dim). */
export class Softmin extends Module {
  constructor(readonly dim = -1) {
    super();
    if (!Number.isInteger(dim)) throw new ValueError(`Softmin: dim must be an integer; got ${dim}`);
  }
  forward(x: Tensor): Tensor {
    return F.softmin(x, this.dim);
  }
}

/** a·σ(b) for the halves of `dim` (default the last, as PyTorch). */
export class GLU extends Module {
  constructor(readonly dim = -1) {
    super();
    if (!Number.isInteger(dim)) throw new ValueError(`GLU: dim must be an integer; got ${dim}`);
  }
  forward(x: Tensor): Tensor {
    return F.glu(x, this.dim);
  }
}
