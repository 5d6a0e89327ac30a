import { DTypeError, ShapeError, ValueError } from '@surf/core';
import { NestedArray, TensorOptions, arange, gather, noGrad, oneHot, scatter, tensor as make } from '@surf/autograd';

// Index tensors are written as integer literals here; JS numbers are float32 unless a dtype is
// given, so integer-only data is made int32 explicitly (the old inference, for test inputs only).
const tensor = (data: NestedArray, opts: TensorOptions = {}) =>
  make(data, {
    ...([data].flat(Infinity as 1).every((v) => typeof v === 'number' && Number.isInteger(v)) && !opts.requiresGrad
      ? { dtype: 'int32' as const }
      : {}),
    ...opts,
  });

// Forward values against loops written here, and the error cases, on the default (CPU) backend.
// Gradients are checked by the gradcheck suite (gradcheck/cases/index-sort-scan.ts) on CPU and WebGPU.

const grid = (r: number, c: number) =>
  arange(r * c)
    .reshape(r, c)
    .float();
const rows = (r: number, c: number) =>
  Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => i * c + j));

describe('index and slice', () => {
  test('numbers, slices, null and ellipsis give NumPy results', async () => {
    const x = arange(24).reshape(2, 3, 4);
    const ref = Array.from({ length: 2 }, (_, a) =>
      Array.from({ length: 3 }, (_, b) => Array.from({ length: 4 }, (_, c) => a * 12 + b * 4 + c)),
    );
    expect(await x.index(1).toArray()).toEqual(ref[1]);
    expect(await x.index(-1, 2).toArray()).toEqual(ref[1][2]);
    expect(await x.index(0, 1, 3).toArray()).toBe(ref[0][1][3]);
    expect(await x.index(':', '1:').toArray()).toEqual(ref.map((p) => p.slice(1)));
    expect(await x.index('...', '::2').toArray()).toEqual(
      ref.map((p) => p.map((r) => r.filter((_, c) => c % 2 === 0))),
    );
    expect(await x.index('...', { start: 1, step: 2 }).toArray()).toEqual(
      ref.map((p) => p.map((r) => r.filter((_, c) => c % 2 === 1))),
    );
    expect(x.index(null, '...', null).shape).toEqual([1, 2, 3, 4, 1]);
    expect(x.index(0, null, ':', -1).shape).toEqual([1, 3]);
    expect(await x.index('...', 1, '-2:').toArray()).toEqual(ref.map((p) => p[1].slice(-2)));
    // Python clamps slice bounds; an empty slice is fine.
    expect(x.index(':', '5:10').shape).toEqual([2, 0, 4]);
    expect(await x.slice(2, 1, null, 2).toArray()).toEqual(ref.map((p) => p.map((r) => [r[1], r[3]])));
    expect(await x.slice(1, -2).toArray()).toEqual(ref.map((p) => p.slice(-2)));
  });

  test('integer-array indexing: one array, several broadcast arrays, negative entries', async () => {
    const x = grid(4, 5);
    const ref = rows(4, 5);
    expect(await x.index(tensor([3, 0, -1])).toArray()).toEqual([ref[3], ref[0], ref[3]]);
    expect(await x.index(':', [4, 1]).toArray()).toEqual(ref.map((r) => [r[4], r[1]]));
    expect(await x.index(tensor([0, 2]), tensor([1, -1])).toArray()).toEqual([ref[0][1], ref[2][4]]);
    // [2,1] and [3] broadcast to [2,3]
    expect(await x.index(tensor([[1], [3]]), tensor([0, 2, 4])).toArray()).toEqual([
      [ref[1][0], ref[1][2], ref[1][4]],
      [ref[3][0], ref[3][2], ref[3][4]],
    ]);
    const y = arange(2 * 3 * 4).reshape(2, 3, 4);
    // Adjacent advanced dims stay in place; separated ones move to the front (NumPy).
    expect(y.index(':', [0, 2], [1, 3]).shape).toEqual([2, 2]);
    expect(y.index([0, 1], ':', [1, 3]).shape).toEqual([2, 3]);
    expect(await y.index([1, 0], ':', [3, 0]).toArray()).toEqual([
      [15, 19, 23],
      [0, 4, 8],
    ]);
    expect(
      y.index(
        ':',
        tensor([
          [0, 1],
          [2, 2],
        ]),
      ).shape,
    ).toEqual([2, 2, 2, 4]);
  });

  test('bad indices are clear errors', () => {
    const x = grid(2, 3);
    expect(() => x.index(2)).toThrow(/index 2 is out of range for dim 0 of size 2/);
    expect(() => x.index(0, 0, 0)).toThrow(ShapeError);
    expect(() => x.index('...', '...')).toThrow(ValueError);
    expect(() => x.index('::-1')).toThrow(/positive integer/);
    expect(() => x.index('a:b')).toThrow(ValueError);
    expect(() => x.index([0, 5])).toThrow(/index 5 is out of range/);
    expect(() => x.index(tensor([true, false]))).toThrow(DTypeError);
    expect(() => x.index(tensor([0.5]))).toThrow(DTypeError);
  });
});

describe('gather, scatter, scatterAdd, maskedFill, oneHot', () => {
  test('gather along each dim', async () => {
    const x = grid(3, 4);
    const ref = rows(3, 4);
    const idx = [
      [0, 3],
      [2, 2],
      [1, 0],
    ];
    expect(await x.gather(1, tensor(idx)).toArray()).toEqual(idx.map((r, i) => r.map((j) => ref[i][j])));
    const idx0 = [[2, 0, 1, 1]];
    expect(await gather(x, 0, tensor(idx0)).toArray()).toEqual([idx0[0].map((i, j) => ref[i][j])]);
    expect(() => x.gather(1, tensor([[0, 1]]).float())).toThrow(DTypeError);
    expect(() => x.gather(1, tensor([0, 1]))).toThrow(ShapeError);
    expect(() => x.gather(0, tensor([[0, 1, 2, 3, 0]]))).toThrow(/does not fit/);
  });

  test('scatter and scatterAdd write where torch does; duplicates add up', async () => {
    const x = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]).float();
    const idx = tensor([
      [2, 0],
      [1, 1],
    ]);
    const src = tensor([
      [10, 20, 30],
      [40, 50, 60],
    ]).float();
    // scatter dim 1: out[i][idx[i][j]] = src[i][j]; row 1 writes position 1 twice (either wins).
    const s = (await x.scatter(1, idx, src).toArray()) as number[][];
    expect(s[0]).toEqual([20, 2, 10]);
    expect([
      [4, 40, 6],
      [4, 50, 6],
    ]).toContainEqual(s[1]);
    expect(await x.scatterAdd(1, idx, src).toArray()).toEqual([
      [21, 2, 13],
      [4, 95, 6],
    ]);
    expect(await scatter(x, 0, tensor([[1, 0, 1]]), 0).toArray()).toEqual([
      [1, 0, 3],
      [0, 5, 0],
    ]);
    expect(() => x.scatter(1, idx, src.int())).toThrow(DTypeError);
  });

  test('maskedFill keeps the dtype and broadcasts the mask', async () => {
    const x = tensor([
      [1, 2],
      [3, 4],
    ]);
    expect(await x.maskedFill(tensor([true, false]), 9.7).toArray()).toEqual([
      [9, 2],
      [9, 4],
    ]);
    expect(await x.float().maskedFill(x.gt(2), -1.5).toArray()).toEqual([
      [1, 2],
      [-1.5, -1.5],
    ]);
    expect(() => x.maskedFill(tensor([1, 0]), 0)).toThrow(DTypeError);
    expect(() => tensor([1, 2]).maskedFill(tensor([[true], [false]]), 0)).toThrow(ShapeError);
  });

  test('oneHot', async () => {
    expect(await oneHot(tensor([2, 0, 1]), 3).toArray()).toEqual([
      [0, 0, 1],
      [1, 0, 0],
      [0, 1, 0],
    ]);
    // A class outside [0, numClasses) is an error, as in PyTorch.
    expect(() => oneHot(tensor([2, 0, 5]), 3)).toThrow(ValueError);
    expect(oneHot(tensor([[1]]), 4).shape).toEqual([1, 1, 4]);
    expect(() => oneHot(tensor([1]), -1)).toThrow(/numClasses/);
    expect(() => oneHot(tensor([1.5]), 2)).toThrow(DTypeError);
  });
});

describe('sort, argsort, topk', () => {
  test('sort is stable both ways and puts NaN last (first when descending)', async () => {
    const x = tensor([3, 1, NaN, 1, 2]);
    const a = x.sort();
    expect(Array.from(await a.values.data())).toEqual([1, 1, 2, 3, NaN]);
    expect(await a.indices.toArray()).toEqual([1, 3, 4, 0, 2]);
    const d = x.sort(0, { descending: true });
    expect(Array.from(await d.values.data())).toEqual([NaN, 3, 2, 1, 1]);
    expect(await d.indices.toArray()).toEqual([2, 0, 4, 1, 3]);
    expect(
      await tensor([
        [3, 1],
        [0, 2],
      ])
        .argsort(0)
        .toArray(),
    ).toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(await tensor([true, false]).sort().values.toArray()).toEqual([false, true]);
  });

  test('topk picks the k largest or smallest, sorted', async () => {
    const x = tensor([
      [5, 1, 4, 2],
      [0, 9, 9, 3],
    ]).float();
    const t = x.topk(2);
    expect(await t.values.toArray()).toEqual([
      [5, 4],
      [9, 9],
    ]);
    expect(await t.indices.toArray()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(await x.topk(1, 0, { largest: false }).values.toArray()).toEqual([[0, 1, 4, 2]]);
    expect(() => x.topk(5)).toThrow(/k = 5/);
  });
});

describe('scans, reductions, shapes', () => {
  test('cumsum and prod match loops, with zeros and int32', async () => {
    const v = [0.5, -2, 3, 0, 1.5, 2, -1, 4, 0.25];
    const cs = v.map((_, i) => v.slice(0, i + 1).reduce((a, b) => a + b, 0));
    expect(
      Array.from(await tensor(v).cumsum(0).data())
        .map((y, i) => y - cs[i])
        .every((e) => Math.abs(e) < 1e-5),
    ).toBe(true);
    expect(
      await tensor([
        [1, 2, 3],
        [4, 5, 6],
      ])
        .cumsum(1)
        .toArray(),
    ).toEqual([
      [1, 3, 6],
      [4, 9, 15],
    ]);
    expect(
      await tensor([
        [1, 2, 3],
        [4, 5, 6],
      ])
        .cumsum(0)
        .toArray(),
    ).toEqual([
      [1, 2, 3],
      [5, 7, 9],
    ]);
    expect(
      await tensor([
        [1, 2, 3],
        [4, 5, 6],
      ])
        .prod(1)
        .toArray(),
    ).toEqual([6, 120]);
    expect(
      await tensor([
        [1, 2, 3],
        [4, 5, 6],
      ])
        .prod()
        .toArray(),
    ).toBe(720);
    expect(
      await tensor([
        [1, 2, 3],
        [4, 0, 6],
      ])
        .float()
        .prod(0, true)
        .toArray(),
    ).toEqual([[4, 0, 18]]);
    expect(await tensor([2, 3, 4, 5, 6]).prod().item()).toBe(720);
    expect(await tensor([]).prod().item()).toBe(1);
  });

  test('norm orders', async () => {
    const x = tensor([
      [3, -4],
      [0, 0],
    ]).float();
    expect(await x.norm().item()).toBeCloseTo(5, 5);
    expect(await x.norm(2, 1).toArray()).toEqual([5, 0]);
    expect(await x.norm(1, 1, true).toArray()).toEqual([[7], [0]]);
    expect(await x.norm(Infinity).item()).toBe(4);
    expect(await x.norm(-Infinity, 1).toArray()).toEqual([3, 0]);
    expect(await x.norm(0).item()).toBe(2);
    expect(await x.norm(3, 1).index(0).item()).toBeCloseTo(Math.cbrt(27 + 64), 4);
    expect(() => tensor([1, 2]).norm()).toThrow(DTypeError);
  });

  test('any and all, over dims and empty', async () => {
    const x = tensor([
      [0, 1, 0],
      [0, 0, 0],
    ]);
    expect(await x.any().item()).toBe(1);
    expect(await x.any(1).toArray()).toEqual([true, false]);
    expect(await x.all(0).toArray()).toEqual([false, false, false]);
    expect(
      await tensor([
        [1, 2],
        [NaN, 3],
      ])
        .all(1, true)
        .toArray(),
    ).toEqual([[true], [true]]);
    expect(await tensor([]).any().toArray()).toBe(false);
    expect(await tensor([]).all().toArray()).toBe(true);
  });

  test('repeat, split, chunk, triu, tril', async () => {
    const x = tensor([
      [1, 2],
      [3, 4],
    ]);
    expect(await x.repeat(1, 2).toArray()).toEqual([
      [1, 2, 1, 2],
      [3, 4, 3, 4],
    ]);
    expect(await tensor([1, 2]).repeat(2, 2).toArray()).toEqual([
      [1, 2, 1, 2],
      [1, 2, 1, 2],
    ]);
    expect(() => x.repeat(2)).toThrow(ShapeError);
    const r = arange(7);
    expect(await Promise.all(r.split(3).map((t) => t.toArray()))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(await Promise.all(r.split([2, 5]).map((t) => t.toArray()))).toEqual([
      [0, 1],
      [2, 3, 4, 5, 6],
    ]);
    expect(() => r.split([2, 2])).toThrow(/add up to 4/);
    expect(r.chunk(3).map((t) => t.shape[0])).toEqual([3, 3, 1]);
    expect(
      arange(6)
        .chunk(4)
        .map((t) => t.shape[0]),
    ).toEqual([2, 2, 2]);
    const m = grid(3, 4);
    const ref = rows(3, 4);
    expect(await m.triu().toArray()).toEqual(ref.map((row, i) => row.map((v, j) => (j >= i ? v : 0))));
    expect(await m.tril(-1).toArray()).toEqual(ref.map((row, i) => row.map((v, j) => (j <= i - 1 ? v : 0))));
    expect(await m.triu(2).toArray()).toEqual(ref.map((row, i) => row.map((v, j) => (j >= i + 2 ? v : 0))));
  });
});

describe('in-place ops', () => {
  test('change the tensor, keep its dtype, and check shapes', async () => {
    const x = tensor([1, 2, 3]).float();
    expect(x.add_(1)).toBe(x);
    x.mul_(tensor([2, 2, 2]).float())
      .sub_(1)
      .div_(2);
    expect(await x.toArray()).toEqual([1.5, 2.5, 3.5]);
    x.clamp_(2, 3);
    expect(await x.toArray()).toEqual([2, 2.5, 3]);
    x.copy_(tensor([7]).float());
    expect(await x.toArray()).toEqual([7, 7, 7]);
    x.zero_();
    expect(await x.toArray()).toEqual([0, 0, 0]);
    x.fill_(4);
    expect(await x.toArray()).toEqual([4, 4, 4]);
    const i = tensor([1, 2]);
    expect(() => i.div_(2)).toThrow(DTypeError);
    expect(() => i.add_(tensor([[1], [2]]))).toThrow(ShapeError);
    expect(await i.toArray()).toEqual([1, 2]);
  });

  test('on graph tensors the gradient flows through the in-place op', async () => {
    const w = tensor([1, 2, 3], { requiresGrad: true });
    const y = w.mul(2);
    y.mul_(w).add_(1); // y = 2w² + 1
    y.sum().backward();
    expect(await w.grad!.toArray()).toEqual([4, 8, 12]);
  });

  test('backward refuses a graph whose saved tensor was changed in place', () => {
    const w = tensor([1, 2], { requiresGrad: true });
    const h = w.mul(3);
    const y = h.mul(h); // saves h
    h.add_(1);
    expect(() => y.sum().backward()).toThrow(/modified in place afterwards \(version 0 -> 1\)/);
    expect(() => w.add_(1)).toThrow(/leaf tensor that requires grad/);
    const p = tensor([1, 2], { requiresGrad: true });
    const q = p.mul(p);
    noGrad(() => p.sub_(0.5));
    expect(() => q.sum().backward()).toThrow(ValueError);
    expect(() => tensor([0, 0]).float().add_(p)).toThrow(/needs autograd history/);
  });
});
