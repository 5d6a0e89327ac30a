import { Backend, CpuBackend } from '@surf/core';
import { Module, Tensor, crossEntropy, optim, setBackend } from '@surf/nn';
import { gpuAvailable, gpuBackend } from '../../../test-support/gpu';

export * from '../../../test-support/gpu';

/** The training step the jit tests record: zeroGrad, crossEntropy of the model's output, backward, step; returns the loss. */
export function ceStep(model: Module, opt: optim.Optimizer<{ lr: number }>): (x: Tensor, y: Tensor) => Tensor {
  return (x, y) => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
}

/** Runs fn with `backend` as the current backend, restoring the previous one afterwards. */
export async function on<T>(backend: Backend, fn: () => T | Promise<T>): Promise<T> {
  const prev = setBackend(backend);
  try {
    return await fn();
  } finally {
    setBackend(prev);
  }
}

/**
 * One CPU backend and (when available) one WebGPU backend per test file. gpu() is for tests
 * registered with testGpu/describeGpu/testEach/describeEach, which are skipped without one.
 */
export function backends(): { cpu: Backend; gpu: () => Backend; setup: () => Promise<void>; teardown: () => void } {
  const cpu = new CpuBackend();
  let gpu: Backend | null = null;
  return {
    cpu,
    gpu: () => {
      if (!gpu) throw new Error('no WebGPU backend: register this test with testGpu/describeGpu (test-support/gpu.ts)');
      return gpu;
    },
    setup: async () => {
      if (gpuAvailable) gpu = await gpuBackend();
    },
    teardown: () => {
      gpu?.destroy();
    },
  };
}

/**
 * A module as a function of its input and its parameters (torch.func.functional_call), so
 * gradcheck can perturb the parameters: the given tensors stand in for the module's
 * parameters, in namedParameters() order, while fn runs.
 */
export function functional(model: Module): (x: Tensor, ...params: Tensor[]) => Tensor {
  const names = model.namedParameters().map(([n]) => n);
  const owners = new Map(model.namedModules());
  const slot = (name: string): [Record<string, unknown>, string] => {
    // The longest module prefix owns the field ('0.weight' -> module '0', field 'weight').
    const parts = name.split('.');
    for (let k = parts.length - 1; k >= 0; k--) {
      const owner = owners.get(parts.slice(0, k).join('.'));
      if (!owner) continue;
      const rest = parts.slice(k);
      if (rest.length === 1) return [owner as unknown as Record<string, unknown>, rest[0]];
      return [(owner as unknown as Record<string, unknown>)[rest[0]] as Record<string, unknown>, rest[1]];
    }
    throw new Error(`functional: no owner for ${name}`);
  };
  return (x, ...params) => {
    const slots = names.map(slot);
    const saved = slots.map(([o, k]) => o[k]);
    slots.forEach(([o, k], i) => {
      if (params[i]) o[k] = params[i];
    });
    try {
      return model.forward(x);
    } finally {
      slots.forEach(([o, k], i) => {
        o[k] = saved[i];
      });
    }
  };
}

/** Reads a tensor as a plain number array. */
export async function arr(t: Tensor): Promise<number[]> {
  return Array.from(await t.data());
}
