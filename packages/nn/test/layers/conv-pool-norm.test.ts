import { ValueError } from '@surf/core';
import { Tensor, manualSeed, nn, optim, crossEntropy, tensor, randn, randint } from '@surf/nn';
import { backends, describeEach, on } from '../helpers';

// The CNN modules: PyTorch's parameter layout and init bounds, train()/eval() of BatchNorm,
// its state dict, and a conv-BN-ReLU-pool model that learns, on CPU and WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const maxAbs = async (t: Tensor) => Math.max(...Array.from((await t.data()) as Float32Array, Math.abs));

describeEach(['cpu', 'webgpu'] as const, 'cnn modules on %s', (kind) => {
  const run = async (fn: () => Promise<void>) => {
    const be = kind === 'cpu' ? b.cpu : b.gpu();
    await on(be, fn);
  };

  test('Conv2d, Conv1d and ConvTranspose2d: shapes, names and default init bounds', () =>
    run(async () => {
      manualSeed(1);
      const c = new nn.Conv2d(4, 6, 3, { padding: 1, groups: 2 });
      expect(c.namedParameters().map(([n, p]) => [n, p.shape])).toEqual([
        ['weight', [6, 2, 3, 3]],
        ['bias', [6]],
      ]);
      const bound = 1 / Math.sqrt(2 * 9);
      expect(await maxAbs(c.weight)).toBeLessThanOrEqual(bound);
      expect(await maxAbs(c.weight)).toBeGreaterThan(bound * 0.8);
      expect(await maxAbs(c.bias!)).toBeLessThanOrEqual(bound);
      expect(c.forward(randn([2, 4, 5, 5])).shape).toEqual([2, 6, 5, 5]);
      expect(new nn.Conv1d(3, 2, 4, { stride: 2, bias: false }).forward(randn([1, 3, 9])).shape).toEqual([1, 2, 3]);
      const t = new nn.ConvTranspose2d(3, 4, [2, 3], { stride: 2 });
      expect(t.weight.shape).toEqual([3, 4, 2, 3]);
      expect(t.forward(randn([1, 3, 4, 4])).shape).toEqual([1, 4, 8, 9]);
      expect(() => new nn.Conv2d(3, 4, 3, { groups: 2 })).toThrow(ValueError);
    }));

  test('BatchNorm2d: train() updates running stats, eval() uses them; state dict keys', () =>
    run(async () => {
      const bn = new nn.BatchNorm2d(2, { momentum: 0.5 });
      const x = tensor([
        [[[1, 3]], [[0, 0]]],
        [[[5, 7]], [[2, 2]]],
      ]).float(); // [2,2,1,2]
      bn.forward(x);
      expect(await bn.running_mean!.toArray()).toEqual([2, 0.5]);
      expect(await bn.num_batches_tracked!.toArray()).toBe(1);
      bn.eval();
      const y = (await bn.forward(x).data()) as Float32Array;
      const rv = (await bn.running_var!.data()) as Float32Array;
      expect(y[0]).toBeCloseTo((1 - 2) / Math.sqrt(rv[0] + 1e-5), 5);
      expect(await bn.running_mean!.toArray()).toEqual([2, 0.5]);
      if ('registerBuffer' in bn) {
        // With Module buffers (nnapi): running stats are saved under PyTorch's keys.
        expect(Object.keys(bn.stateDict())).toEqual([
          'weight',
          'bias',
          'running_mean',
          'running_var',
          'num_batches_tracked',
        ]);
      }
      expect(() => bn.forward(randn([2, 3, 2, 2]))).toThrow(/BatchNorm2d: input has shape \[2,3,2,2\]/);
      const noStats = new nn.BatchNorm1d(3, { trackRunningStats: false, affine: false });
      expect(noStats.parameters()).toEqual([]);
      expect(noStats.eval().forward(randn([4, 3])).shape).toEqual([4, 3]);
    }));

  test('a conv-BN-ReLU-pool model learns a toy task', () =>
    run(async () => {
      manualSeed(3);
      // Class = which half of an 8x8 image is brighter.
      const n = 16;
      const labels = randint(0, 2, [n]);
      const lab = (await labels.toArray()) as number[];
      const img = randn([n, 1, 8, 8]).mul(0.3);
      const shift = tensor(
        Array.from({ length: n * 64 }, (_, i) => (i % 8 < 4 === (lab[Math.floor(i / 64)] === 0) ? 1 : 0)),
        { dtype: 'float32' },
      ).reshape([n, 1, 8, 8]);
      const x = img.add(shift);
      const model = new nn.Sequential(
        new nn.Conv2d(1, 4, 3, { padding: 1 }),
        new nn.BatchNorm2d(4),
        new nn.ReLU(),
        new nn.MaxPool2d(2),
        new nn.AdaptiveAvgPool2d([1, 2]),
        new nn.Flatten(),
        new nn.Linear(8, 2),
      );
      const opt = new optim.Adam(model.parameters(), { lr: 0.05 });
      let first = 0,
        last = 0;
      for (let step = 0; step < 15; step++) {
        opt.zeroGrad();
        const loss = crossEntropy(model.forward(x), labels);
        loss.backward();
        opt.step();
        const v = await loss.item();
        if (step === 0) first = v;
        last = v;
      }
      expect(last).toBeLessThan(first * 0.5);
    }));
});

test('conv, pool and batch-norm modules reject a non-object where the options go', () => {
  expect(() => new nn.Conv2d(1, 2, 3, 1 as never)).toThrow(
    /Conv2d: the options argument must be an object like \{ stride,/,
  );
  expect(() => new nn.ConvTranspose2d(1, 2, 3, 'x' as never)).toThrow(
    /ConvTranspose2d: the options argument must be an object/,
  );
  expect(() => new nn.MaxPool2d(2, 2 as never)).toThrow(/MaxPool2d: the options argument must be an object/);
  expect(() => new nn.AvgPool2d(2, [] as never)).toThrow(/AvgPool2d: the options argument must be an object/);
  expect(() => new nn.BatchNorm2d(4, 0.1 as never)).toThrow(
    /BatchNorm2d: the options argument must be an object like \{ eps,/,
  );
});
