import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';

/** Runs its layers in order; they are named '0', '1', ... as in PyTorch. */
export class Sequential extends Module {
  readonly layers: Module[];

  constructor(...layers: Module[]) {
    super();
    layers.forEach((l, i) => {
      if (!(l instanceof Module))
        throw new ValueError(`Sequential: argument ${i} is ${l === null ? 'null' : typeof l}; expected a Module`);
    });
    this.layers = layers;
  }

  protected override entries(): [string, Tensor | Module][] {
    return this.layers.map((l, i) => [String(i), l]);
  }

  get length(): number {
    return this.layers.length;
  }

  at(i: number): Module {
    const l = this.layers.at(i);
    if (!l) throw new ValueError(`Sequential.at: index ${i} is out of range for ${this.layers.length} layers`);
    return l;
  }

  forward(x: Tensor): Tensor {
    // Intermediate activations stay alive only through the graph: each one is disposed as
    // soon as the next layer has consumed it (backward still sees what it saved). No layer
    // is special here: a Linear followed by a ReLU fuses by autograd's general rule (the
    // ReLU folds into the matmul's epilogue), as it does in any container or plain class.
    let y = x;
    for (const l of this.layers) {
      const next = l.forward(y);
      if (y !== x && next !== y) y.dispose();
      y = next;
    }
    return y;
  }
}
