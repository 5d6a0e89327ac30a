import { ValueError, parseOptions } from '@surf/core';
import { Tensor, tidy } from '@surf/autograd';
import { Module } from '../module';

/** Parameter-free activation layers: each forwards to the Tensor method of the same name. */

export class ReLU extends Module {
  forward(x: Tensor): Tensor {
    return x.relu();
  }
}

export class LeakyReLU extends Module {
  constructor(readonly negativeSlope = 0.01) {
    super();
    if (typeof negativeSlope !== 'number' || !Number.isFinite(negativeSlope))
      throw new ValueError(`LeakyReLU: negativeSlope must be a finite number; got ${negativeSlope}`);
  }
  forward(x: Tensor): Tensor {
    return x.leakyRelu(this.negativeSlope);
  }
  protected override extraRepr(): string {
    return `negativeSlope=${this.negativeSlope}`;
  }
}

/** approximate 'none' (default, as PyTorch) is x·Φ(x); 'tanh' is the tanh approximation. */
export class GELU extends Module {
  readonly approximate: 'none' | 'tanh';
  constructor(opts: { approximate?: 'none' | 'tanh' } = {}) {
    super();
    this.approximate = parseOptions<typeof opts>('GELU', opts, { approximate: ['none', 'tanh'] }).approximate ?? 'none';
    if (this.approximate !== 'none' && this.approximate !== 'tanh')
      throw new ValueError(`GELU: approximate must be 'none' or 'tanh'; got ${JSON.stringify(this.approximate)}`);
  }
  forward(x: Tensor): Tensor {
    return x.gelu(this.approximate);
  }
  protected override extraRepr(): string {
    return this.approximate === 'none' ? '' : `approximate='${this.approximate}'`;
  }
}

export class Tanh extends Module {
  forward(x: Tensor): Tensor {
    return x.tanh();
  }
}

export class Sigmoid extends Module {
  forward(x: Tensor): Tensor {
    return x.sigmoid();
  }
}

/** Softmax over `dim` (default the last dim). */
export class Softmax extends Module {
  constructor(readonly dim = -1) {
    super();
    if (!Number.isInteger(dim)) throw new ValueError(`Softmax: dim must be an integer; got ${dim}`);
  }
  forward(x: Tensor): Tensor {
    return x.softmax(this.dim);
  }
  protected override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

/** x·σ(x) (PyTorch's nn.SiLU, a.k.a. swish). */
export class SiLU extends Module {
  forward(x: Tensor): Tensor {
    return x.silu();
  }
}

/** log(softmax(x)) over `dim`, computed stably (PyTorch's nn.LogSoftmax). */
export class LogSoftmax extends Module {
  constructor(readonly dim = -1) {
    super();
    if (!Number.isInteger(dim)) throw new ValueError(`LogSoftmax: dim must be an integer; got ${dim}`);
  }
  forward(x: Tensor): Tensor {
    return x.logSoftmax(this.dim);
  }
  protected override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}
