import { ValueError, cpuThreads, setCpuThreads } from '@surf/core';
import { init, tensor } from '@surf/autograd';

// init({ threads }) reaches the CPU backend's thread pool; bad counts are rejected there.
test('init({ backend: "cpu", threads }) sets the CPU thread count; a bad count is a ValueError', async () => {
  await expect(init({ backend: 'cpu', threads: 0 })).rejects.toThrow(ValueError);
  await expect(init({ backend: 'cpu', threads: 1.5 })).rejects.toThrow(/integer from 1 to 65/);
  const r = await init({ backend: 'cpu', threads: 2 });
  expect(r.backend).toBe('cpu');
  expect(cpuThreads()).toBe(2);
  expect(r.description).toMatch(/2 threads/);
  // A product big enough to be split gives the same numbers as on one thread.
  const a = tensor(Float32Array.from({ length: 96 * 200 }, (_, i) => Math.sin(i))).reshape(96, 200);
  const b = tensor(Float32Array.from({ length: 200 * 160 }, (_, i) => Math.cos(i))).reshape(200, 160);
  const two = await a.matmul(b).toArray();
  setCpuThreads({ threads: 1 });
  const one = await a.matmul(b).toArray();
  expect(two).toEqual(one);
  await init({ backend: 'cpu', threads: 1 });
});
