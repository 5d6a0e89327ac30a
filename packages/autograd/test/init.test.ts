import { ValueError } from '@surf/core';
import { getBackend, init, tensor } from '@surf/autograd';

// Without '@surf/webgpu' imported, 'webgpu' is not registered: 'auto' must fall back and say why.
test("init('auto') falls back to the CPU when no webgpu backend is registered, and says why", async () => {
  const r = await init();
  expect(r.backend).toBe('cpu');
  expect(r.fallbackReason).toMatch(/no 'webgpu' backend is registered/);
  expect(getBackend().name).toBe('cpu');
  expect(await tensor([1, 2]).add(1).toArray()).toEqual([2, 3]);
});

test("init('webgpu') without the package raises a BackendError naming the fix", async () => {
  await expect(init({ backend: 'webgpu' })).rejects.toThrow(/import '@surf\/webgpu'/);
  await expect(init({ backend: 'tpu' as never })).rejects.toThrow(ValueError);
});

test('tensors of a replaced backend are unusable afterwards', async () => {
  await init({ backend: 'cpu' });
  const t = tensor([1]);
  await init({ backend: 'cpu' });
  expect(() => t.add(1)).toThrow(/destroyed/);
});
