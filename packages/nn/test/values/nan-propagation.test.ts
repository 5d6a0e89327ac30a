import { crossEntropy, scaledDotProductAttention, tensor } from '@surf/nn';
import type { NestedArray } from '@surf/nn';
import { backends, on, testEach } from '../helpers';
import { edge, expectClose } from './fixtures';

// NaN propagates as in PyTorch (fixtures from scripts/values/make-fixtures.py): WGSL's max()
// may drop a NaN operand, and exp/log of NaN are not NaN on every GPU, so the kernels test
// NaN explicitly.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
// Integer literals would make int32 tensors.
const ft = (d: NestedArray) => tensor(d, { dtype: 'float32' });
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());
const nanRows = () => [
  [1, NaN, 0],
  [0, 0, 0],
];

testEach(['cpu', 'webgpu'], 'crossEntropy over a row with NaN is NaN on %s', (k) =>
  on(pick(k), async () => {
    const y = tensor([0, 1], { dtype: 'int32' });
    expectClose([await crossEntropy(ft(nanRows()), y).item()], [edge.nan.crossEntropy]);
    expectClose(await crossEntropy(ft(nanRows()), y, { reduction: 'none' }).data(), edge.nan.crossEntropyNone);
    expectClose([await crossEntropy(ft(nanRows()), y, { reduction: 'sum' }).item()], [NaN]);
    expectClose(await crossEntropy(ft(nanRows()), y, { reduction: 'none', labelSmoothing: 0.1 }).data(), [
      NaN,
      await crossEntropy(ft([[0, 0, 0]]), tensor([1], { dtype: 'int32' }), { labelSmoothing: 0.1 }).item(),
    ]);
  }),
);

testEach(['cpu', 'webgpu'], 'softmax, logSoftmax and logsumexp rows with NaN are NaN on %s', (k) =>
  on(pick(k), async () => {
    const allNaN = ft([
      [NaN, NaN, NaN],
      [1, 2, 3],
    ]);
    expectClose(await allNaN.softmax(-1).data(), edge.nan.softmaxAllNaN.flat());
    expectClose(
      await ft([[1, NaN, 0]])
        .softmax(-1)
        .data(),
      edge.nan.softmaxOneNaN.flat(),
    );
    expectClose(
      await ft([[1, NaN, 0]])
        .logSoftmax(-1)
        .data(),
      edge.nan.logSoftmaxOneNaN.flat(),
    );
    expectClose(
      await ft([
        [1, NaN, 0],
        [1, 2, 3],
      ])
        .logsumexp(-1)
        .data(),
      edge.nan.logsumexp,
    );
  }),
);

testEach(['cpu', 'webgpu'], 'max and min reductions with NaN are NaN on %s', (k) =>
  on(pick(k), async () => {
    const x = () =>
      ft([
        [1, NaN, 3],
        [4, 5, 6],
      ]);
    expectClose([await x().max().item()], [edge.nan.max]);
    expectClose([await x().min().item()], [edge.nan.min]);
    expectClose(await x().amax(1).data(), edge.nan.maxDim);
    expectClose(await x().amin(1).data(), edge.nan.minDim);
    // Longer rows take the vectorised and chunked paths of the reduction.
    const long = Array.from({ length: 4096 }, (_, i) => (i === 3001 ? NaN : i % 97));
    expectClose([await ft(long).max().item()], [NaN]);
    expectClose([await ft(long).min().item()], [NaN]);
    expectClose(
      await ft(long).reshape([64, 64]).amax(0).data(),
      long.slice(0, 64).map((_, j) => (j === 3001 % 64 ? NaN : Math.max(...long.filter((_, i) => i % 64 === j)))),
    );
  }),
);

testEach(['cpu', 'webgpu'], 'attention with a NaN key row gives NaN rows on %s', (k) =>
  on(pick(k), async () => {
    const q = ft([
      [
        [1, 0],
        [0.5, -1],
      ],
    ]);
    const kk = ft([
      [
        [1, 2],
        [NaN, 0],
        [0, 1],
      ],
    ]);
    const v = ft([
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    ]);
    expectClose(await scaledDotProductAttention(q, kk, v).data(), edge.nan.attention.flat(2));
    // A whole query row of NaN scores, with a causal mask too.
    const qn = ft([
      [
        [NaN, 0],
        [0.5, -1],
      ],
    ]);
    const out = await scaledDotProductAttention(qn, v, v).data();
    expectClose(out.slice(0, 2), [NaN, NaN]);
    expect(out.slice(2).every(Number.isFinite)).toBe(true);
    // Head dim 32: the register-tiled kernel on WebGPU; one NaN key makes every row NaN, and a
    // NaN query row only its own row.
    const n = 40,
      e = 32;
    const rows = (seed: number) =>
      ft(Array.from({ length: n }, (_, i) => Array.from({ length: e }, (_, j) => Math.sin(seed * (i * e + j + 1)))));
    const kNaN = rows(2);
    const kData = (await kNaN.data()).slice();
    kData[7 * e + 3] = NaN;
    const big = await scaledDotProductAttention(
      rows(1).reshape([1, n, e]),
      ft(Array.from(kData)).reshape([1, n, e]),
      rows(3).reshape([1, n, e]),
    ).data();
    expect(big.every(Number.isNaN)).toBe(true);
    const qData = (await rows(1).data()).slice();
    qData[5 * e] = NaN;
    const one = await scaledDotProductAttention(
      ft(Array.from(qData)).reshape([1, n, e]),
      rows(2).reshape([1, n, e]),
      rows(3).reshape([1, n, e]),
    ).data();
    for (let i = 0; i < n; i++) expect([i, one.slice(i * e, i * e + e).every(Number.isNaN)]).toEqual([i, i === 5]);
  }),
);
