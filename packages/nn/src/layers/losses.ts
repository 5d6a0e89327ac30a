import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { OptionRule, parseOptions } from '@surf/core';
import {
  LOSS_SPECS,
  CrossEntropyOptions,
  KLDivReduction,
  LossOptions,
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  crossEntropy,
  huberLoss,
  klDivLoss,
  l1Loss,
  mseLoss,
  nllLoss,
  smoothL1Loss,
} from '../losses';

/**
 * Loss modules (torch.nn's): each holds its options and forwards to the loss function of the
 * same name (see losses.ts). `forward(input, target)` returns the loss tensor.
 */
abstract class Loss<O extends object> extends Module {
  readonly opts: O;
  constructor(name: string, opts: O | undefined, spec: Readonly<Record<string, OptionRule>>) {
    super();
    this.opts = parseOptions(name, opts, spec as never) as O;
  }
  abstract override forward(input: Tensor, target: Tensor): Tensor;
  protected override extraRepr(): string {
    return Object.entries(this.opts)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? `'${v}'` : String(v)}`)
      .join(', ');
  }
}

export class CrossEntropyLoss extends Loss<CrossEntropyOptions> {
  constructor(opts?: CrossEntropyOptions) {
    super('CrossEntropyLoss', opts, LOSS_SPECS.crossEntropy);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return crossEntropy(input, target, this.opts);
  }
}

export class NLLLoss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) {
    super('NLLLoss', opts, LOSS_SPECS.nllLoss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return nllLoss(input, target, this.opts);
  }
}

export class MSELoss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) {
    super('MSELoss', opts, LOSS_SPECS.mseLoss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return mseLoss(input, target, this.opts);
  }
}

export class L1Loss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) {
    super('L1Loss', opts, LOSS_SPECS.l1Loss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return l1Loss(input, target, this.opts);
  }
}

export class BCELoss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) {
    super('BCELoss', opts, LOSS_SPECS.binaryCrossEntropy);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropy(input, target, this.opts);
  }
}

export class BCEWithLogitsLoss extends Loss<LossOptions & { posWeight?: Tensor | number }> {
  constructor(opts?: LossOptions & { posWeight?: Tensor | number }) {
    super('BCEWithLogitsLoss', opts, LOSS_SPECS.binaryCrossEntropyWithLogits);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropyWithLogits(input, target, this.opts);
  }
}

export class HuberLoss extends Loss<LossOptions & { delta?: number }> {
  constructor(opts?: LossOptions & { delta?: number }) {
    super('HuberLoss', opts, LOSS_SPECS.huberLoss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return huberLoss(input, target, this.opts);
  }
}

export class SmoothL1Loss extends Loss<LossOptions & { beta?: number }> {
  constructor(opts?: LossOptions & { beta?: number }) {
    super('SmoothL1Loss', opts, LOSS_SPECS.smoothL1Loss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return smoothL1Loss(input, target, this.opts);
  }
}

export class KLDivLoss extends Loss<{ reduction?: KLDivReduction; logTarget?: boolean }> {
  constructor(opts?: { reduction?: KLDivReduction; logTarget?: boolean }) {
    super('KLDivLoss', opts, LOSS_SPECS.klDivLoss);
  }
  forward(input: Tensor, target: Tensor): Tensor {
    return klDivLoss(input, target, this.opts);
  }
}
