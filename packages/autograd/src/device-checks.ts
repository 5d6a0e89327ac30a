import { NDArray } from '@surf/core';
import type { Tensor } from './tensor';

/**
 * Checks that need data living on the device, deferred to the tensor's readback (as CUDA's
 * device-side asserts surface at the next synchronisation): an op that cannot validate its
 * inputs on the host without stalling (crossEntropy's class indices on a GPU) attaches a
 * check to its result; reading that result back (data, toArray, item) runs the check first
 * and throws its error. The arrays a check holds are released when it runs or when the
 * tensor is disposed.
 */
interface DeviceCheck {
  arrays: NDArray[];
  /** Resolves when the data is valid; throws the op's error otherwise. */
  run: (arrays: NDArray[]) => Promise<void>;
}

const checks = new WeakMap<Tensor, DeviceCheck>();

export function attachDeviceCheck(t: Tensor, arrays: NDArray[], run: DeviceCheck['run']): void {
  checks.set(t, { arrays, run });
}

/** Runs (once) the check attached to t, if any. */
export async function runDeviceCheck(t: Tensor): Promise<void> {
  const c = checks.get(t);
  if (!c) return;
  checks.delete(t);
  try {
    await c.run(c.arrays);
  } finally {
    c.arrays.forEach((a) => a.dispose());
  }
}

export function dropDeviceCheck(t: Tensor): void {
  const c = checks.get(t);
  if (!c) return;
  checks.delete(t);
  c.arrays.forEach((a) => a.dispose());
}
