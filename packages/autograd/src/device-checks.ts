import { NDArray, TypedArray } from '@surf/core';
import type { Tensor } from './tensor';

/**
 * Checks that need data living on the device, deferred to the tensor's readback (as CUDA's
 * device-side asserts surface at the next synchronisation): an op that cannot validate its
 * inputs on the host without stalling (crossEntropy's class indices on a GPU) attaches a
 * check to its result; reading that result back (data, toArray, item) hands the values read
 * to the check, which throws the op's error when they show a problem (crossEntropy's NaN
 * rows), reading its own arrays only then, so a valid readback costs nothing extra. The
 * arrays a check holds are released when it runs or when the tensor is disposed.
 */
interface DeviceCheck {
  arrays: NDArray[];
  /** Given the values read back, resolves when they are valid; throws the op's error otherwise. */
  run: (arrays: NDArray[], values: TypedArray) => Promise<void>;
}

const checks = new WeakMap<Tensor, DeviceCheck>();

export function attachDeviceCheck(t: Tensor, arrays: NDArray[], run: DeviceCheck['run']): void {
  checks.set(t, { arrays, run });
}

/** Runs (once) the check attached to t, if any, on the values just read from it. */
export async function runDeviceCheck(t: Tensor, values: TypedArray): Promise<void> {
  const c = checks.get(t);
  if (!c) return;
  checks.delete(t);
  try {
    await c.run(c.arrays, values);
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
