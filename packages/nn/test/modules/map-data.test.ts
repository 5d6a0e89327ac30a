import {
  ArrayDataset,
  BatchSampler,
  ConcatDataset,
  FunctionDataset,
  MapDataLoader,
  RandomSampler,
  SequentialSampler,
  Tensor,
  ValueError,
  WeightedRandomSampler,
  defaultCollate,
  randomSplit,
  manualSeed,
  tensor,
} from '@surf/nn';

// Map-style datasets over host samples, samplers, defaultCollate and the MapDataLoader.

test('samplers: sequential, a fresh seeded permutation per epoch, with replacement', () => {
  expect([...new SequentialSampler(4)]).toEqual([0, 1, 2, 3]);
  manualSeed(1);
  const r = new RandomSampler(10);
  const a = [...r],
    b = [...r];
  expect([...a].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  expect(a).not.toEqual(b);
  manualSeed(1);
  expect([...new RandomSampler(10)]).toEqual(a);
  expect([...new RandomSampler(3, { numSamples: 7 })].length).toBe(7);
  const w = [...new RandomSampler(3, { replacement: true, numSamples: 300 })];
  expect(new Set(w)).toEqual(new Set([0, 1, 2]));
  expect(() => new RandomSampler(3, { num_samples: 2 } as never)).toThrow(/numSamples/);
});

test('WeightedRandomSampler draws in proportion to the weights; without replacement each once', () => {
  manualSeed(2);
  const counts = [0, 0, 0, 0];
  for (const i of new WeightedRandomSampler([1, 0, 3, 6], 20000)) counts[i]++;
  expect(counts[1]).toBe(0);
  expect(Math.abs(counts[0] / 20000 - 0.1)).toBeLessThan(0.01);
  expect(Math.abs(counts[2] / 20000 - 0.3)).toBeLessThan(0.015);
  expect(Math.abs(counts[3] / 20000 - 0.6)).toBeLessThan(0.015);
  const once = [...new WeightedRandomSampler([1, 0, 3, 6], 3, { replacement: false })];
  expect([...once].sort()).toEqual([0, 2, 3]);
  expect(() => new WeightedRandomSampler([1, 0], 2, { replacement: false })).toThrow(ValueError);
});

test('BatchSampler groups indices, dropping a short last batch when asked', () => {
  expect([...new BatchSampler(new SequentialSampler(5), 2)]).toEqual([[0, 1], [2, 3], [4]]);
  const dropped = new BatchSampler(new SequentialSampler(5), 2, true);
  expect([...dropped]).toEqual([
    [0, 1],
    [2, 3],
  ]);
  expect(dropped.length).toBe(2);
});

test('defaultCollate stacks tensors, numbers, typed arrays and nests through tuples and objects', async () => {
  const out = defaultCollate([
    { x: tensor(Float32Array.from([1, 2])), y: 3, tag: 'a', pair: [Int32Array.from([4]), 0.5] },
    { x: tensor(Float32Array.from([5, 6])), y: 7, tag: 'b', pair: [Int32Array.from([8]), 1.5] },
  ]) as { x: Tensor; y: Tensor; tag: string[]; pair: [Tensor, Tensor] };
  expect(out.x.shape).toEqual([2, 2]);
  expect(Array.from(await out.x.data())).toEqual([1, 2, 5, 6]);
  expect(out.y.dtype).toBe('float32');
  expect(Array.from(await out.y.data())).toEqual([3, 7]);
  expect(out.tag).toEqual(['a', 'b']);
  expect(out.pair[0].dtype).toBe('int32');
  expect(out.pair[0].shape).toEqual([2, 1]);
  expect(Array.from(await out.pair[1].data())).toEqual([0.5, 1.5]);
  expect(() => defaultCollate([{ a: 1 }, { b: 1 }])).toThrow(/keys a/);
  expect(() => defaultCollate([null])).toThrow(/collate function/);
});

test('MapDataLoader: batchSize 1 by default, shuffle covers every sample, collate and subsets', async () => {
  const ds = new FunctionDataset(10, (i) => [i * 10, Int32Array.from([i])] as [number, Int32Array]);
  expect(new MapDataLoader(ds).length).toBe(10);
  manualSeed(3);
  const seen: number[] = [];
  for (const [x, y] of new MapDataLoader(ds, { batchSize: 4, shuffle: true }) as Iterable<[Tensor, Tensor]>) {
    const xs = Array.from(await x.data());
    const ys = Array.from(await y.data());
    xs.forEach((v, k) => expect(v).toBe(ys[k] * 10));
    seen.push(...ys);
  }
  expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const sums = [
    ...new MapDataLoader(new ArrayDataset([1, 2, 3, 4, 5]).subset([4, 0, 2]), {
      batchSize: 2,
      collate: (s: number[]) => s.reduce((a, b) => a + b, 0),
    }),
  ];
  expect(sums).toEqual([6, 3]);
  const cat = new ConcatDataset([new ArrayDataset(['a']), new ArrayDataset(['b', 'c'])]);
  expect([cat.at(0), cat.at(2), cat.length]).toEqual(['a', 'c', 3]);
  expect(() => new MapDataLoader(ds, { shuffle: true, sampler: new SequentialSampler(10) })).toThrow(/exclude/);
  expect(() => new MapDataLoader(ds, { batch_size: 2 } as never)).toThrow(/batchSize/);
});

test('randomSplit splits a map-style dataset into disjoint seeded subsets', () => {
  const ds = new ArrayDataset([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  const [a, b] = randomSplit(ds, [0.7, 0.3], { seed: 4 });
  const take = (d: { length: number; at(i: number): number }) => Array.from({ length: d.length }, (_, i) => d.at(i));
  expect([a.length, b.length]).toEqual([7, 3]);
  expect([...take(a), ...take(b)].sort()).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  const [a2] = randomSplit(ds, [7, 3], { seed: 4 });
  expect(take(a2)).toEqual(take(a));
});
