import { DeviceLostError, DisposedError, SurfError } from '@surf/core';
import { Tensor, getBackend, init, memory, tensor } from '@surf/autograd';
import { WebGPUBackend } from '@surf/webgpu';
import { testGpu, watchUnhandled } from './gpu';

/**
 * Device loss: after device.destroy() (what a driver reset looks like to WebGPU) every use
 * of the backend raises a DeviceLostError naming the op, pending reads reject instead of
 * hanging, init() gives a working backend again, and tensors of the lost device keep saying
 * so. No rejection goes unhandled.
 */
const watch = watchUnhandled();

afterAll(async () => {
  await init({ backend: 'cpu' });
  watch.stop();
});
afterEach(() => {
  expect(watch.list).toEqual([]);
});

async function webgpu(): Promise<WebGPUBackend> {
  const r = await init({ backend: 'webgpu' });
  expect(r.backend).toBe('webgpu');
  return getBackend() as WebGPUBackend;
}

/** The error `fn` raises (sync or as a rejection), or null. */
async function errorOf(fn: () => unknown): Promise<Error | null> {
  try {
    await fn();
    return null;
  } catch (e) {
    return e as Error;
  }
}

testGpu('after device.destroy() ops, reads and new tensors raise DeviceLostError; init() recovers', async () => {
  const b = await webgpu();
  const x = tensor([1, 2, 3], { dtype: 'float32' });
  const y = x.mul(2);
  expect(Array.from(await y.data())).toEqual([2, 4, 6]);
  b.device.destroy();
  const info = await b.device.lost;
  expect(info.reason).toBe('destroyed');

  for (const [what, fn] of [
    ['an op', () => x.add(1)],
    ['a reduction', () => x.sum()],
    ['a matmul', () => x.reshape(1, 3).matmul(x.reshape(3, 1))],
    ['a read', () => y.data()],
    ['a new tensor', () => tensor([4, 5])],
  ] as [string, () => unknown][]) {
    const e = await errorOf(fn);
    expect([what, e?.name]).toEqual([what, 'DeviceLostError']);
    expect(e!.message).toMatch(/the WebGPU device was lost \(reason: destroyed/);
    if (process.env.SURF_PRINT_ERRORS) console.log(`${e!.name}: ${e!.message}`);
  }
  // Disposing on a lost device is fine, and memory() still answers.
  y.dispose();
  expect(() => memory()).not.toThrow();

  const b2 = await webgpu();
  expect(b2).not.toBe(b);
  expect(Array.from(await tensor([1, 2]).add(1).data())).toEqual([2, 3]);
  // The old tensor belongs to the destroyed backend: using it says so, and never computes.
  const e = await errorOf(() => x.add(1));
  expect(e).toBeInstanceOf(SurfError);
  expect(e).toBeInstanceOf(DisposedError);
  expect(e!.message).toMatch(/destroyed/);
  x.dispose();
});

testGpu('a read pending when the device is lost rejects with a SurfError instead of hanging', async () => {
  const b = await webgpu();
  const x = tensor(Float32Array.from({ length: 4096 }, (_, i) => i));
  const reads: Promise<unknown>[] = [];
  for (let i = 0; i < 8; i++) reads.push(x.mul(i).sum().data());
  b.device.destroy();
  const settled = await Promise.allSettled(reads);
  for (const s of settled) {
    // A read that finished before the loss may still resolve; one that did not must reject clearly.
    if (s.status === 'rejected') {
      expect(s.reason).toBeInstanceOf(SurfError);
      expect((s.reason as Error).message).toMatch(/lost|destroyed/);
    }
  }
  expect(settled.some((s) => s.status === 'rejected')).toBe(true);
  await init({ backend: 'webgpu' });
  expect(await tensor([3]).mul(3).item()).toBe(9);
});

testGpu(
  'destroying the backend (init() to another one) makes its tensors raise DisposedError naming the op',
  async () => {
    await webgpu();
    const x: Tensor = tensor([1, 2]);
    await init({ backend: 'cpu' });
    const e = await errorOf(() => x.sum());
    expect(e).toBeInstanceOf(DisposedError);
    expect(e!.message).toMatch(/^sum: /);
    const r = await errorOf(() => x.data());
    expect(r).toBeInstanceOf(DisposedError);
    x.dispose();
    expect(await tensor([1, 2]).sum().item()).toBe(3);
  },
);

test('DeviceLostError is a BackendError, so apps can catch either', () => {
  const e = new DeviceLostError('x');
  expect(e).toBeInstanceOf(SurfError);
  expect(e.name).toBe('DeviceLostError');
});
