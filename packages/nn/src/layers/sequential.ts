import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { ReLU } from './activations';
import { Linear } from './linear';

/** Runs its layers in order; they are named '0', '1', ... as in PyTorch. */
export class Sequential extends Module {
  readonly layers: Module[];

  constructor(...layers: Module[]) {
    super();
    layers.forEach((l, i) => {
      if (!(l instanceof Module)) throw new ValueError(`Sequential: argument ${i} is ${l === null ? 'null' : typeof l}; expected a Module`);
    });
    this.layers = layers;
  }

  protected override entries(): [string, Tensor | Module][] {
    return this.layers.map((l, i) => [String(i), l]);
  }

  get length(): number { return this.layers.length; }

  at(i: number): Module {
    const l = this.layers.at(i);
    if (!l) throw new ValueError(`Sequential.at: index ${i} is out of range for ${this.layers.length} layers`);
    return l;
  }

  forward(x: Tensor): Tensor {
    // Intermediate activations stay alive only through the graph: each one is disposed as
    // soon as the next layer has consumed it (backward still sees what it saved).
    // A Linear followed by a ReLU (exactly those classes: a subclass may change forward) runs
    // as one fused op, the ReLU in the matmul's epilogue and its mask in the backward.
    let y = x;
    const ls = this.layers;
    for (let i = 0; i < ls.length; i++) {
      const l = ls[i];
      const fuse = l.constructor === Linear && ls[i + 1]?.constructor === ReLU;
      const next = fuse ? (l as Linear).forwardWith(y, 'relu') : l.forward(y);
      if (fuse) i++;
      if (y !== x && next !== y) y.dispose();
      y = next;
    }
    return y;
  }
}
