import { Backend, CpuBackend, NDArray, TypedArray, randomArray } from '@surf/core';

export const cpu = new CpuBackend();

/** The same float data uploaded to the GPU backend and to the CPU reference. */
export function twin(gpu: Backend, shape: number[], seed: number, lo = -1, hi = 1): [NDArray, NDArray] {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = randomArray('uniform', n, seed, lo, hi);
  return [NDArray.fromData(gpu, data, shape), NDArray.fromData(cpu, data, shape)];
}

/** Asserts |got - want| <= atol + rtol·scale elementwise, where scale defaults to |want|. */
export function expectClose(got: TypedArray, want: TypedArray, rtol: number, atol: number, what: string, scale?: ArrayLike<number>): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const g = got[i];
    const w = want[i];
    if (Number.isNaN(w) && Number.isNaN(g)) continue;
    const allowed = atol + rtol * (scale ? scale[i] : Math.abs(w));
    if (!(Math.abs(g - w) <= allowed) && g !== w) {
      throw new Error(`${what}: element ${i} is ${g}, the CPU says ${w} (allowed error ${allowed})`);
    }
  }
}
