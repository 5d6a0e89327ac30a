import { BackendError, DeviceLostError, DisposedError, E, NDArray, View } from '@surf/core';
import { createWebGPUBackend, isWebGPUAvailable } from '@surf/webgpu';
import { gpuBackend, testGpu } from './gpu';

// Device acquisition, loss, destroy, GPU errors turned into op errors, and the buffer pool.

testGpu('the backend names its adapter and uses the adapter limits', async () => {
  const b = await gpuBackend();
  try {
    expect(b.name).toBe('webgpu');
    expect(b.description).toMatch(/^WebGPU: \S/);
    expect(b.adapter).not.toBeNull();
    expect(b.limits.maxStorageBufferBindingSize).toBe(b.adapter!.limits.maxStorageBufferBindingSize);
    expect(b.limits.maxComputeInvocationsPerWorkgroup).toBe(b.adapter!.limits.maxComputeInvocationsPerWorkgroup);
    expect(await isWebGPUAvailable()).toBe(true);
  } finally {
    b.destroy();
  }
});

testGpu('destroy(): the next op raises DisposedError, dispose stays harmless, a new backend works', async () => {
  const b = await gpuBackend();
  const x = NDArray.fromData(b, [1, 2, 3], [3]);
  b.destroy();
  b.destroy(); // idempotent
  expect(() => x.map(E.neg(E.in(0)))).toThrow(DisposedError);
  expect(() => x.map(E.neg(E.in(0)))).toThrow(
    /elementwise: the WebGPU backend was destroyed; create a new one with createWebGPUBackend\(\)/,
  );
  await expect(b.read(x.storage)).rejects.toThrow(DisposedError);
  x.dispose();
  const b2 = await createWebGPUBackend();
  try {
    expect(Array.from(await NDArray.fromData(b2, [1, 2, 3], [3]).sum().data())).toEqual([6]);
  } finally {
    b2.destroy();
  }
});

testGpu('device loss: the next op raises DeviceLostError naming the reason; re-creating works', async () => {
  const b = await gpuBackend();
  const x = NDArray.fromData(b, [1, 2, 3], [3]);
  b.device.destroy();
  await b.device.lost;
  await new Promise((r) => setTimeout(r, 0));
  let err: unknown;
  try {
    x.map(E.neg(E.in(0)));
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(DeviceLostError);
  expect((err as Error).message).toMatch(
    /^elementwise: the WebGPU device was lost \(reason: destroyed.*\); create a new backend with createWebGPUBackend\(\)/,
  );
  await expect(b.read(x.storage)).rejects.toThrow(DeviceLostError);
  b.destroy();
  const b2 = await createWebGPUBackend();
  try {
    expect(Array.from(await NDArray.fromData(b2, [4, 5], [2]).max().data())).toEqual([5]);
  } finally {
    b2.destroy();
  }
});

testGpu('a GPU validation error becomes a BackendError naming the op, then the backend carries on', async () => {
  const b = await gpuBackend();
  try {
    const x = NDArray.fromData(b, [1, 2, 3], [3]);
    await b.sync();
    // Sabotage: destroy the GPU buffer under a live storage, then use it.
    (x.storage as unknown as { buf: { buffer: GPUBuffer } }).buf.buffer.destroy();
    const y = x.map(E.mul(E.in(0), E.f(2)));
    let err: unknown;
    try {
      await y.data();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BackendError);
    expect((err as Error).message).toMatch(/elementwise \[3\].*GPU validation error: .*destroyed/is);
    // Raised once; later ops run normally.
    const z = NDArray.fromData(b, [1, 2, 3], [3]).map(E.add(E.in(0), E.f(1)));
    expect(Array.from(await z.data())).toEqual([2, 3, 4]);
  } finally {
    b.destroy();
  }
});

testGpu('storages are checked: use after dispose, another backend, idempotent dispose', async () => {
  const b = await gpuBackend();
  const b2 = await createWebGPUBackend();
  try {
    const s = b.fromData(new Float32Array([1, 2]), 'float32');
    b.dispose(s);
    b.dispose(s);
    await expect(b.read(s)).rejects.toThrow(/read: a float32 storage of 2 elements was used after dispose\(\)/);
    const other = b2.fromData(new Float32Array([1]), 'float32');
    expect(() => b.reduce('sum', { storage: other, view: View.contiguous([1]) }, [0])).toThrow(
      /sum: got a storage of backend 'webgpu'.*expected one of this WebGPU backend/,
    );
    b2.dispose(other);
  } finally {
    b.destroy();
    b2.destroy();
  }
});

testGpu('the pool: freed buffers are reused, memory() goes back down', async () => {
  const b = await gpuBackend();
  try {
    const m0 = b.memory();
    expect(m0.buffers).toBe(0);
    const xs = [1000, 1000, 5000].map((n) => NDArray.full(b, [n], 1));
    const m1 = b.memory();
    expect(m1.buffers).toBe(3);
    expect(m1.bytes).toBeGreaterThanOrEqual(7000 * 4);
    expect(m1.bytes).toBeLessThanOrEqual(7000 * 4 * 1.25);
    const ids = xs.map((x) => (x.storage as unknown as { buf: { id: number } }).buf.id);
    for (const x of xs) x.dispose();
    const m2 = b.memory();
    expect(m2.buffers).toBe(0);
    expect(m2.bytes).toBe(0);
    expect(m2.pooledBuffers).toBe(3);
    expect(m2.pooledBytes).toBe(m1.bytes);
    // Same sizes again: the same GPU buffers come back, nothing new is allocated.
    const ys = [1000, 5000, 1000].map((n) => NDArray.full(b, [n], 2));
    const ids2 = ys.map((y) => (y.storage as unknown as { buf: { id: number } }).buf.id);
    expect(new Set(ids2)).toEqual(new Set(ids));
    expect(b.memory().pooledBuffers).toBe(0);
    const total = ys[1].sum();
    expect(Array.from(await total.data())).toEqual([10000]);
    total.dispose();
    for (const y of ys) y.dispose();
    b.trimPool();
    expect(b.memory()).toMatchObject({ buffers: 0, bytes: 0 });
  } finally {
    b.destroy();
  }
});

testGpu('an upload never lands in a buffer that an unsubmitted kernel still reads', async () => {
  const b = await gpuBackend({ opsPerSubmit: 1000 });
  try {
    const a = NDArray.fromData(b, [1, 2, 3, 4], [4]);
    await b.sync();
    const y = a.map(E.mul(E.in(0), E.f(10))); // recorded, not submitted
    a.dispose(); // a's buffer goes back to the pool while y's kernel still reads it
    const c = NDArray.fromData(b, [7, 7, 7, 7], [4]); // must not overwrite a's buffer before y runs
    expect(Array.from(await y.data())).toEqual([10, 20, 30, 40]);
    expect(Array.from(await c.data())).toEqual([7, 7, 7, 7]);
  } finally {
    b.destroy();
  }
});
