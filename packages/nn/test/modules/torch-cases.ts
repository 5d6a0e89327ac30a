import { readFileSync } from 'fs';
import { join } from 'path';
import type { Backend } from '@surf/core';
import { Module, Tensor, tensor } from '@surf/nn';
import { on } from '../helpers';

/**
 * PyTorch reference cases written by scripts/interop/make-modules-fixtures.py: a module's state
 * dict by PyTorch's names, inputs, outputs (tuples flattened), a cotangent per output and the
 * gradients of Σ output·cotangent for every input and parameter.
 */
export interface Enc {
  shape: number[];
  data: number[];
}
export interface TorchCase {
  name: string;
  state: Record<string, Enc>;
  inputs: Enc[];
  outputs: Enc[];
  cotangents: Enc[];
  inputGrads: (Enc | null)[];
  paramGrads: Record<string, Enc>;
}

export function loadCases(group: string): Record<string, TorchCase> {
  return JSON.parse(readFileSync(join(__dirname, '../fixtures/modules', `${group}.json`), 'utf8')) as Record<
    string,
    TorchCase
  >;
}

export const fromEnc = (e: Enc): Tensor => tensor(Float32Array.from(e.data)).reshape(e.shape);

/** Passes when |got − want| − rtol·|want| ≤ atol everywhere; else names the worst element. */
function expectClose(
  what: string,
  got: ArrayLike<number>,
  gotShape: readonly number[],
  want: Enc,
  atol: number,
  rtol: number,
): void {
  expect(`${what} shape ${JSON.stringify([...gotShape])}`).toBe(`${what} shape ${JSON.stringify(want.shape)}`);
  let worst = 0,
    at = -1;
  for (let i = 0; i < want.data.length; i++) {
    const err = Math.abs(got[i] - want.data[i]) - rtol * Math.abs(want.data[i]);
    if (!(err <= worst)) {
      worst = Number.isNaN(err) ? Infinity : err;
      at = i;
    }
  }
  if (worst > atol) throw new Error(`${what}: element ${at} is ${got[at]}, PyTorch has ${want.data[at]}`);
}

/**
 * Loads the case's state dict into `build()`'s module (strict: the names must be PyTorch's),
 * runs `run` in eval mode on the inputs and compares outputs and gradients with PyTorch's.
 */
export async function checkCase(
  backend: Backend,
  c: TorchCase,
  build: () => Module,
  run: (m: Module, inputs: Tensor[]) => Tensor[],
  atol = 2e-5,
  rtol = 1e-5,
): Promise<void> {
  await on(backend, async () => {
    const m = build();
    const state = Object.fromEntries(Object.entries(c.state).map(([k, e]) => [k, fromEnc(e)]));
    m.loadStateDict(state);
    m.eval();
    const inputs = c.inputs.map((e, i) => {
      const t = fromEnc(e);
      return c.inputGrads[i] ? t.requiresGrad_(true) : t;
    });
    const outs = run(m, inputs);
    expect(outs.length).toBe(c.outputs.length);
    for (let i = 0; i < outs.length; i++)
      expectClose(`${c.name} output ${i}`, await outs[i].data(), outs[i].shape, c.outputs[i], atol, rtol);
    let loss: Tensor | null = null;
    outs.forEach((o, i) => {
      const term = o.mul(fromEnc(c.cotangents[i])).sum();
      loss = loss ? loss.add(term) : term;
    });
    (loss as unknown as Tensor).backward();
    for (let i = 0; i < inputs.length; i++) {
      const want = c.inputGrads[i];
      if (!want) continue;
      const g = inputs[i].grad;
      if (!g) throw new Error(`${c.name}: input ${i} has no gradient`);
      expectClose(`${c.name} grad of input ${i}`, await g.data(), g.shape, want, atol, rtol);
    }
    const params = new Map(m.namedParameters());
    expect(Object.keys(c.paramGrads).sort()).toEqual([...params.keys()].filter((k) => c.paramGrads[k]).sort());
    for (const [k, want] of Object.entries(c.paramGrads)) {
      const g = params.get(k)!.grad;
      if (!g) throw new Error(`${c.name}: parameter ${k} has no gradient`);
      expectClose(`${c.name} grad of ${k}`, await g.data(), g.shape, want, atol, rtol);
    }
  });
}
