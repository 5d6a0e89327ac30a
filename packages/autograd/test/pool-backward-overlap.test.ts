import { maxPool2d, tensor } from '@surf/autograd';

// Max-pool gradients where windows overlap and stride > 1 (a ResNet stem's 3x3 stride-2 pool),
// against a scatter written here: each window's gradient goes to its largest input.
const cases: [string, { k: number; s: number; p: number; d: number }][] = [
  ['3x3 stride 2 pad 1', { k: 3, s: 2, p: 1, d: 1 }],
  ['3x3 stride 3 dilation 2', { k: 3, s: 3, p: 0, d: 2 }],
  ['2x2 stride 1', { k: 2, s: 1, p: 0, d: 1 }],
];

test.each(cases)('maxPool2d %s backward equals the scatter to each window max', async (_, { k, s, p, d }) => {
  const [N, C, H, W] = [2, 3, 9, 11];
  // Distinct values (a permutation), so every window has one largest input.
  const n = N * C * H * W;
  const xs = Float32Array.from({ length: n }, (_, i) => ((i * 7919) % n) / n);
  const oH = Math.floor((H + 2 * p - d * (k - 1) - 1) / s) + 1,
    oW = Math.floor((W + 2 * p - d * (k - 1) - 1) / s) + 1;
  const gs = Float32Array.from({ length: N * C * oH * oW }, (_, i) => ((i % 13) - 6) / 7);
  const leaf = tensor(xs, { requiresGrad: true });
  const y = maxPool2d(leaf.reshape([N, C, H, W]), k, { stride: s, padding: p, dilation: d });
  expect(y.shape).toEqual([N, C, oH, oW]);
  y.mul(tensor(gs).reshape([N, C, oH, oW]))
    .sum()
    .backward();
  const got = (await leaf.grad!.data()) as Float32Array;
  const want = new Float64Array(n);
  for (let b = 0; b < N * C; b++)
    for (let oh = 0; oh < oH; oh++)
      for (let ow = 0; ow < oW; ow++) {
        let best = -Infinity,
          at = -1;
        for (let i = 0; i < k; i++)
          for (let j = 0; j < k; j++) {
            const yy = oh * s - p + i * d,
              xx = ow * s - p + j * d;
            if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
            const v = xs[(b * H + yy) * W + xx];
            if (v > best) [best, at] = [v, (b * H + yy) * W + xx];
          }
        want[at] += gs[(b * oH + oh) * oW + ow];
      }
  for (let i = 0; i < n; i++)
    if (Math.abs(got[i] - want[i]) > 1e-6) throw new Error(`x[${i}]: ${got[i]} vs ${want[i]}`);
});
