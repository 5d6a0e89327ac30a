import { DataLoader, Tensor, TensorDataset, ValueError, manualSeed, randomSplit, tensor } from '@surf/nn';
import { arr, backends, describeEach, on } from './helpers';

// TensorDataset, randomSplit and DataLoader over datasets; shuffling follows manualSeed;
// batches are typed as tuples.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

/** Row i of x is [i, 10i]; y[i] = 100 + i, so a batch shows which rows it holds. */
function data(n: number): [Tensor, Tensor] {
  const x = tensor(
    Array.from({ length: n }, (_, i) => [i, 10 * i]),
    { dtype: 'float32' },
  );
  const y = tensor(
    Array.from({ length: n }, (_, i) => 100 + i),
    { dtype: 'int32' },
  );
  return [x, y];
}

async function rowsOf(dl: DataLoader<[Tensor, Tensor]>): Promise<number[]> {
  const rows: number[] = [];
  for (const batch of dl) {
    // A tuple, not Tensor[]: this assignment only type-checks for a 2-tuple.
    const [xb, yb]: [Tensor, Tensor] = batch;
    const ys = (await arr(yb)).map((v) => v - 100);
    expect(await arr(xb)).toEqual(ys.flatMap((v) => [v, 10 * v]));
    rows.push(...ys);
  }
  return rows;
}

test('TensorDataset: length, rows by index, shape checks', () =>
  on(B.cpu, async () => {
    const ds = new TensorDataset(...data(5));
    expect(ds.length).toBe(5);
    const [x3, y3] = ds.at(3);
    expect(await arr(x3)).toEqual([3, 30]);
    expect(await arr(y3)).toEqual([103]);
    expect(await arr(ds.at(-1)[1])).toEqual([104]);
    expect(() => ds.at(5)).toThrow(/index 5 is out of range for 5 rows/);
    expect(() => new TensorDataset(tensor([1, 2]), tensor([1, 2, 3]))).toThrow(/tensor 1 has shape \[3\]/);
  }));

test('randomSplit: disjoint subsets covering every row, seeded by manualSeed, fractions allowed', () =>
  on(B.cpu, async () => {
    const ds = new TensorDataset(...data(10));
    manualSeed(4);
    const [a, b] = randomSplit(ds, [7, 3]);
    expect([a.length, b.length]).toEqual([7, 3]);
    const all = [...a.indices, ...b.indices].sort((p, q) => p - q);
    expect(all).toEqual(Array.from({ length: 10 }, (_, i) => i));
    manualSeed(4);
    const [a2] = randomSplit(ds, [7, 3]);
    expect([...a2.indices]).toEqual([...a.indices]);
    manualSeed(5);
    expect([...randomSplit(ds, [7, 3])[0].indices]).not.toEqual([...a.indices]);
    // Fractions: floor, then one extra row each to the first subsets (as PyTorch).
    expect(randomSplit(ds, [0.55, 0.45]).map((s) => s.length)).toEqual([6, 4]);
    expect(() => randomSplit(ds, [5, 4])).toThrow(/do not add up to the dataset's 10 rows/);
    expect(() => randomSplit(ds, [5, 5], 3 as never)).toThrow(ValueError);
    // A subset's rows are the dataset's rows.
    expect(await arr(b.at(0)[1])).toEqual([100 + b.indices[0]]);
    // Nested subsets map through to the base rows.
    const [c] = randomSplit(a, [7], { seed: 1 });
    expect([...c.indices].sort((p, q) => p - q)).toEqual([...a.indices].sort((p, q) => p - q));
  }));

describeEach(['cpu', 'webgpu'] as const, 'DataLoader over datasets on %s', (kind) => {
  test('a Subset in order and shuffled; shuffles follow manualSeed', async () => {
    await on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
      const ds = new TensorDataset(...data(9));
      const [train] = randomSplit(ds, [6, 3], { seed: 2 });
      const inOrder = await rowsOf(new DataLoader(train, { batchSize: 4 }));
      expect(inOrder).toEqual([...train.indices]);
      manualSeed(8);
      const s1 = await rowsOf(new DataLoader(ds, { batchSize: 4, shuffle: true }));
      manualSeed(8);
      const s2 = await rowsOf(new DataLoader(ds, { batchSize: 4, shuffle: true }));
      manualSeed(9);
      const s3 = await rowsOf(new DataLoader(ds, { batchSize: 4, shuffle: true }));
      expect(s1).toEqual(s2);
      expect(s1).not.toEqual(s3);
      expect([...s1].sort((p, q) => p - q)).toEqual(Array.from({ length: 9 }, (_, i) => i));
      const sub = await rowsOf(new DataLoader(train, { batchSize: 4, shuffle: true, seed: 3 }));
      expect([...sub].sort((p, q) => p - q)).toEqual([...train.indices].sort((p, q) => p - q));
      expect(() => new DataLoader(ds, 4 as never)).toThrow(
        /DataLoader: the options argument must be an object like \{ batchSize/,
      );
    });
  });
});
