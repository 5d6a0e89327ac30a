import { Tensor, ValueError, nllLoss, nn, oneHot, sync, tensor } from '@surf/nn';
import type { NestedArray } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// Every index operand is range-checked, as in PyTorch (which raises): the CPU checks on the
// host at once; WebGPU queues a device-side assert that the next readback or sync() raises.
// Before, out-of-range indices read 0, wrote nothing, or gave zero rows and a loss of 0.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());
const ft = (d: NestedArray) => tensor(d, { dtype: 'float32' });
const it = (d: NestedArray) => tensor(d, { dtype: 'int32' });

/** The call raises `msg` now (CPU) or at the readback of its result (WebGPU). */
async function expectBad(k: 'cpu' | 'webgpu', f: () => Tensor, msg: RegExp): Promise<void> {
  if (k === 'cpu') {
    expect(f).toThrow(ValueError);
    expect(f).toThrow(msg);
    return;
  }
  const r = f();
  await expect(r.data()).rejects.toThrow(msg);
  await expect(sync()).resolves.toBeUndefined(); // raised once
}

const x = () =>
  ft([
    [1, 2, 3, 4],
    [5, 6, 7, 8],
  ]);

testEach(['cpu', 'webgpu'], 'gather, scatter and scatterAdd refuse indices outside the dim on %s', (k) =>
  on(pick(k), async () => {
    await expectBad(k, () => x().gather(1, it([[0, 4]])), /gather: index\[1\] = 4 is outside \[0, 4\)/);
    await expectBad(k, () => x().gather(0, it([[-1, 0]])), /gather: index\[0\] = -1 is outside \[0, 2\)/);
    await expectBad(k, () => x().scatter(1, it([[1, 7]]), ft([[9, 9]])), /scatter: index\[1\] = 7 is outside/);
    await expectBad(k, () => x().scatterAdd(1, it([[-3]]), ft([[9]])), /scatterAdd: index\[0\] = -3 is outside/);
    // In range: the values PyTorch gives.
    expect(
      Array.from(
        await x()
          .gather(1, it([[3, 0]]))
          .data(),
      ),
    ).toEqual([4, 1]);
    expect(
      Array.from(
        await x()
          .scatterAdd(1, it([[3, 3]]), ft([[10, 20]]))
          .data(),
      ),
    ).toEqual([1, 2, 3, 34, 5, 6, 7, 8]);
  }),
);

testEach(['cpu', 'webgpu'], 'indexSelect and Embedding refuse rows outside the table on %s', (k) =>
  on(pick(k), async () => {
    await expectBad(k, () => x().indexSelect(0, it([0, 2])), /indexSelect: index\[1\] = 2 is outside \[0, 2\)/);
    await expectBad(k, () => x().indexSelect(1, it([-1])), /indexSelect: index\[0\] = -1 is outside \[0, 4\)/);
    const emb = new nn.Embedding(3, 2);
    await expectBad(k, () => emb.forward(it([[0, 3]])), /indexSelect: index\[1\] = 3 is outside \[0, 3\)/);
    expect(
      Array.from(
        await x()
          .indexSelect(1, it([3, 1]))
          .data(),
      ),
    ).toEqual([4, 2, 8, 6]);
  }),
);

testEach(['cpu', 'webgpu'], 'oneHot refuses classes outside [0, numClasses) on %s', (k) =>
  on(pick(k), async () => {
    await expectBad(k, () => oneHot(it([0, 3, -1]), 3), /oneHot: class index\[1\]( = 3)? is outside \[0, 3\)/);
    await expectBad(k, () => oneHot(it([[2], [-1]]), 3), /oneHot: class index\[1\] = -1 is outside/);
    expect(Array.from(await oneHot(it([2, 0]), 3).data())).toEqual([0, 0, 1, 1, 0, 0]);
  }),
);

testEach(['cpu', 'webgpu'], 'nllLoss refuses targets outside the class range; its bad rows are NaN on %s', (k) =>
  on(pick(k), async () => {
    const lp = () =>
      ft([
        [-0.5, -1, -2],
        [-0.25, -3, -1.5],
      ]);
    await expectBad(k, () => nllLoss(lp(), it([0, 5])), /nllLoss: target\[1\] = 5 is outside \[0, 3\)/);
    await expectBad(k, () => nllLoss(lp(), it([-1, 0]), { reduction: 'none' }), /nllLoss: target\[0\] = -1/);
    if (k === 'webgpu') {
      // After the raise the value read is NaN, not a loss of 0.
      const bad = nllLoss(lp(), it([0, 5]), { reduction: 'sum' });
      await expect(bad.item()).rejects.toThrow(/target\[1\] = 5/);
      expect(Number.isNaN(await bad.item())).toBe(true);
    }
    expect(await nllLoss(lp(), it([2, 0])).item()).toBeCloseTo(1.125, 6);
  }),
);

testEach(
  ['cpu', 'webgpu'],
  'index with an int32 tensor: negative entries count from the end, others must fit on %s',
  (k) =>
    on(pick(k), async () => {
      await expectBad(k, () => x().index(':', it([0, 4])), /index: index\[1\] = 4 is outside \[-4, 4\)/);
      await expectBad(k, () => x().index(it([-3])), /index: index\[0\] = -3 is outside \[-2, 2\)/);
      expect(
        Array.from(
          await x()
            .index(':', it([-1, 0]))
            .data(),
        ),
      ).toEqual([4, 1, 8, 5]);
    }),
);
