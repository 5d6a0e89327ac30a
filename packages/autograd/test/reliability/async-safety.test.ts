import { CpuBackend, DisposedError, ValueError } from '@surf/core';
import { Tensor, memory, setBackend, tensor, tidy } from '@surf/autograd';
import type { WebGPUBackend } from '@surf/webgpu';
import { describeEach, gpuAvailable, gpuBackend, watchUnhandled } from './gpu';

/**
 * Async safety, as docs/errors.md documents it, on the CPU and on WebGPU:
 * - overlapping readbacks each get their own tensor's values;
 * - a read started before dispose() resolves with the values at the time of the call, even
 *   when the freed buffer is reused at once; a read started after dispose() rejects with a
 *   DisposedError;
 * - tidy() is synchronous: handed an async function it throws a ValueError and frees what
 *   the function made before its first await; tidy() between awaits, in interleaved async
 *   tasks, frees exactly its own temporaries.
 */
let gpu: WebGPUBackend;
const watch = watchUnhandled();
beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => {
  gpu?.destroy();
  watch.stop();
});
afterEach(() => {
  expect(watch.list).toEqual([]);
});

const makers = { cpu: (): CpuBackend | WebGPUBackend => new CpuBackend(), webgpu: () => gpu };

describeEach(['cpu', 'webgpu'] as const, '%s', (kind) => {
  let prev: ReturnType<typeof setBackend> | null = null;
  beforeAll(() => {
    prev = setBackend(makers[kind]());
  });
  afterAll(() => {
    if (prev) setBackend(prev);
  });

  test('overlapping readbacks of many tensors (and of one tensor twice) each get the right values', async () => {
    const before = memory();
    const ts: Tensor[] = Array.from({ length: 24 }, (_, i) =>
      tensor(Float32Array.from({ length: 1 + i * 37 }, (_, j) => i * 1000 + j)),
    );
    const outs = ts.map((t, i) => tidy(() => t.mul(2).add(i)));
    const reads = [...outs.map((t) => t.data()), outs[5].data(), outs[5].data()];
    const got = await Promise.all(reads);
    got.slice(0, 24).forEach((d, i) => {
      expect(d.length).toBe(1 + i * 37);
      expect(Array.from(d).every((v, j) => v === 2 * (i * 1000 + j) + i)).toBe(true);
    });
    expect(Array.from(got[24])).toEqual(Array.from(got[5]));
    expect(Array.from(got[25])).toEqual(Array.from(got[5]));
    [...ts, ...outs].forEach((t) => t.dispose());
    expect(memory().tensors).toBe(before.tensors);
    expect(memory().buffers).toBe(before.buffers);
  });

  test('a read started before dispose() gets the values of the call time even when the buffer is reused', async () => {
    const n = 1000;
    const x = tidy(() => tensor(Float32Array.from({ length: n }, (_, i) => i)).mul(1));
    const pending = x.data();
    x.dispose();
    // Same size: the pool hands the freed buffer to these at once, and they overwrite it.
    const others = Array.from({ length: 4 }, () => tidy(() => tensor(new Float32Array(n).fill(-7)).mul(1)));
    const d = await pending;
    expect(Array.from(d).every((v, i) => v === i)).toBe(true);
    for (const o of others) expect((await o.data())[0]).toBe(-7);
    others.forEach((o) => o.dispose());
    // A read started after dispose() rejects (it does not throw synchronously).
    const late = x.data();
    await expect(late).rejects.toThrow(DisposedError);
    await expect(late).rejects.toThrow(/^data: a tensor of shape \[1000\] \(float32\) was used after dispose\(\)/);
  });

  test('tidy() given an async function throws a ValueError and frees what ran before the first await', async () => {
    const before = memory().tensors;
    let made: Tensor | null = null;
    let after: Tensor | null = null;
    let resume: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      resume = r;
    });
    expect(() =>
      tidy((async () => {
        made = tensor([1, 2]).mul(3);
        await gate;
        after = tensor([5]);
        return made;
      }) as unknown as () => Tensor),
    ).toThrow(ValueError);
    expect(made!.isDisposed).toBe(true);
    expect(memory().tensors).toBe(before);
    // Tensors made after the await belong to no scope: the caller owns them.
    resume();
    await gate;
    await new Promise((r) => setTimeout(r, 0));
    expect(after!.isDisposed).toBe(false);
    after!.dispose();
    expect(memory().tensors).toBe(before);
  });

  test('tidy() between awaits in interleaved async tasks frees exactly its own temporaries', async () => {
    const before = memory();
    const w = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { dtype: 'float32' },
    );
    const task = async (k: number): Promise<number[]> => {
      const sums: number[] = [];
      for (let step = 0; step < 5; step++) {
        const y = tidy(() => w.mul(k).add(step).relu().sum(1));
        sums.push(...Array.from(await y.data()));
        y.dispose();
        await new Promise((r) => setTimeout(r, 0));
      }
      return sums;
    };
    const results = await Promise.all([1, 2, 3].map(task));
    results.forEach((sums, t) => {
      const k = t + 1;
      const want: number[] = [];
      for (let step = 0; step < 5; step++) want.push(3 * k + 2 * step, 7 * k + 2 * step);
      expect(sums).toEqual(want);
    });
    w.dispose();
    expect(memory().tensors).toBe(before.tensors);
    expect(memory().buffers).toBe(before.buffers);
  });
});
