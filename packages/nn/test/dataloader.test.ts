import { DataLoader, Tensor, tensor, tidy } from '@surf/nn';
import { batchIndices, permutation } from '../src/data/batches';
import { arr, backends, describeEach, on } from './helpers';

// Batching, seeded per-epoch shuffles, dropLast, batch contents, ownership, and that only
// the small index travels to the device.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

/** Row r of x is [r, 10r]; y[r] = 100 + r: every batch row names where it came from. */
function dataset(n: number): [Tensor, Tensor] {
  const x = tensor(Float32Array.from({ length: 2 * n }, (_, i) => (i % 2 ? 10 : 1) * Math.floor(i / 2))).reshape([
    n,
    2,
  ]);
  const y = tensor(Int32Array.from({ length: n }, (_, r) => 100 + r));
  return [x, y];
}

test('permutation is a seeded Fisher–Yates shuffle', () => {
  const p = permutation(50, 's');
  expect([...p].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect([...permutation(50, 's')]).toEqual([...p]);
  expect([...permutation(50, 't')]).not.toEqual([...p]);
  expect([...permutation(1, 's')]).toEqual([0]);
  expect(batchIndices(Int32Array.from([0, 1, 2, 3, 4]), 2, false).map((b) => [...b])).toEqual([[0, 1], [2, 3], [4]]);
  expect(batchIndices(Int32Array.from([0, 1, 2, 3, 4]), 2, true).map((b) => [...b])).toEqual([
    [0, 1],
    [2, 3],
  ]);
});

describeEach(['cpu', 'webgpu'] as const, 'DataLoader on %s', (kind) => {
  const get = () => (kind === 'cpu' ? B.cpu : B.gpu());

  test('in order: batches of rows, last one short unless dropLast', async () => {
    const backend = get();
    await on(backend, async () => {
      const [x, y] = dataset(7);
      const dl = new DataLoader([x, y], { batchSize: 3 });
      expect(dl.length).toBe(3);
      const seen: number[][] = [];
      for (const [xb, yb] of dl) {
        const ys = await arr(yb);
        expect(await arr(xb)).toEqual(ys.flatMap((v) => [v - 100, 10 * (v - 100)]));
        expect(xb.shape).toEqual([ys.length, 2]);
        seen.push(ys);
      }
      expect(seen).toEqual([[100, 101, 102], [103, 104, 105], [106]]);
      const dropped = new DataLoader([x, y], { batchSize: 3, dropLast: true });
      expect(dropped.length).toBe(2);
      expect([...dropped].length).toBe(2);
    });
  });

  test('shuffled: each epoch a new seeded permutation, every row once, rows kept together', async () => {
    const backend = get();
    await on(backend, async () => {
      const [x, y] = dataset(10);
      const epoch = async (dl: DataLoader) => {
        const rows: number[] = [];
        for (const [xb, yb] of dl) {
          const ys = await arr(yb);
          expect(await arr(xb)).toEqual(ys.flatMap((v) => [v - 100, 10 * (v - 100)]));
          rows.push(...ys.map((v) => v - 100));
        }
        return rows;
      };
      const dl = new DataLoader([x, y], { batchSize: 4, shuffle: true, seed: 7 });
      const e0 = await epoch(dl);
      const e1 = await epoch(dl);
      expect([...e0].sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect([...e1].sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect(e0).not.toEqual(e1);
      expect(e0).toEqual([...dl.order(0)]);
      expect(e1).toEqual([...dl.order(1)]);
      // Same seed, same epochs: on any backend.
      const again = new DataLoader([x, y], { batchSize: 4, shuffle: true, seed: 7 });
      expect(await epoch(again)).toEqual(e0);
    });
  });

  test('only the int32 batch index is uploaded; the loader frees each batch when it moves on', async () => {
    const backend = get();
    await on(backend, async () => {
      const [x, y] = dataset(9);
      const dl = new DataLoader([x, y], { batchSize: 4, shuffle: true, seed: 1 });
      const up = jest.spyOn(backend, 'fromData');
      const rd = jest.spyOn(backend, 'read');
      const batches: Tensor[][] = [];
      for (const b of dl) batches.push(b);
      expect(up).toHaveBeenCalledTimes(3);
      up.mock.calls.forEach(([data, dtype], i) => {
        expect(dtype).toBe('int32');
        expect(data.length).toBe(i < 2 ? 4 : 1);
      });
      expect(rd).not.toHaveBeenCalled();
      jest.restoreAllMocks();
      expect(batches.flat().every((t) => t.isDisposed)).toBe(true);
      // Breaking out of the loop frees the current batch too; the dataset stays.
      let kept: Tensor[] = [];
      for (const b of dl) {
        kept = b;
        break;
      }
      expect(kept.every((t) => t.isDisposed)).toBe(true);
      expect(x.isDisposed || y.isDisposed).toBe(false);
      // Unshuffled batches are views of the dataset: nothing is uploaded at all.
      const up2 = jest.spyOn(backend, 'fromData');
      for (const b of new DataLoader(x, { batchSize: 4 })) tidy(() => b[0].sum());
      expect(up2).not.toHaveBeenCalled();
      jest.restoreAllMocks();
    });
  });
});

test('bad arguments are named', () =>
  on(B.cpu, () => {
    const [x, y] = dataset(4);
    expect(() => new DataLoader([x, y.narrow(0, 0, 3)], { batchSize: 2 })).toThrow(
      /DataLoader: tensor 1 has shape \[3\]; every tensor needs the same first dim \(rows\), here 4/,
    );
    expect(() => new DataLoader(x, { batchSize: 0 })).toThrow(
      /DataLoader: option 'batchSize' must be an integer >= 1; got 0/,
    );
    expect(() => new DataLoader([], { batchSize: 1 })).toThrow(/expected a tensor or a non-empty array/);
  }));
