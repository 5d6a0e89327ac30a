import { CpuBackend, NDArray, SurfError, ValueError } from '@surf/core';

// A size past the limits is refused before anything is allocated; an allocation the JS engine
// refuses is a BackendError naming the op, the shape and the bytes, as on WebGPU, not a raw
// RangeError; the backend stays usable.

test('a huge CPU allocation is refused before it is tried; one the engine refuses is a BackendError', async () => {
  const cpu = new CpuBackend();
  const before = cpu.memory();
  let err: unknown;
  try {
    NDArray.full(cpu, [1e6, 1e6], 0);
  } catch (e) {
    err = e;
  }
  // Past the element limit the creation op refuses it up front (docs/errors.md, limits).
  expect(err).toBeInstanceOf(ValueError);
  expect(err).toBeInstanceOf(SurfError);
  expect((err as Error).message).toMatch(/^full: a float32 tensor of 1000000000000 elements \(4000000000000 bytes\)/);
  const x = NDArray.full(cpu, [3e5], 1, 'int32');
  const row = x.reshape([1, 3e5]);
  const wide = row.expand([4e5, 3e5]);
  expect(() => wide.contiguous()).toThrow(
    /cpu elementwise: cannot allocate int32 \[400000,300000\] \(480,000,000,000 bytes\)/,
  );
  [wide, row, x].forEach((a) => a.dispose());
  expect(cpu.memory()).toEqual(before);
  expect(Array.from(await NDArray.full(cpu, [2], 7).data())).toEqual([7, 7]);
});
