import { ValueError } from '@surf/core';
import { getBackend, init, tensor } from '@surf/autograd';

// Without '@surf/webgpu' imported, 'webgpu' is not registered: 'auto' must fall back and say why.
test("init('auto') falls back to the CPU when no webgpu backend is registered, and says why", async () => {
  const r = await init();
  expect(r.backend).toBe('cpu');
  expect(r.fallbackReason).toMatch(/no 'webgpu' backend is registered/);
  // The likely cause in a bundle: the side-effect import dropped (package.json sideEffects).
  expect(r.fallbackReason).toMatch(/a bundler drops that import from a file its package's sideEffects does not list/);
  expect(getBackend().name).toBe('cpu');
  expect(await tensor([1, 2]).add(1).toArray()).toEqual([2, 3]);
});

test("init('webgpu') without the package raises a BackendError naming the fix", async () => {
  await expect(init({ backend: 'webgpu' })).rejects.toThrow(/import '@surf\/webgpu'/);
  await expect(init({ backend: 'tpu' as never })).rejects.toThrow(ValueError);
});

test('a CPU init reuses the CPU backend: tensors made before init() stay usable', async () => {
  const t = tensor([1.5]);
  await init({ backend: 'cpu' });
  expect(await t.add(1).toArray()).toEqual([2.5]);
  await init();
  expect(await t.add(t).toArray()).toEqual([3]);
  await expect(init(3 as never)).rejects.toThrow(/init: the options argument must be an object like \{ backend,/);
});
