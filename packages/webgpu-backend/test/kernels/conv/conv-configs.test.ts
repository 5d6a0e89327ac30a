import { ConvParams, E, NDArray, convNd } from '@surf/core';
import { WebGPUBackend } from '@surf/webgpu';
import { expectClose, twin } from '../../cpu-compare';
import { gpuBackend, testGpu } from '../../gpu';

// The conv kernel under the hardware tiling (64x128 tiles, 8x8 registers, padded A, split-K;
// rolled so SwiftShader compiles it quickly) and the 32-row tiles it picks for groups of at
// most 32 output channels, against the CPU backend: sizes that are not tile multiples, two row
// tiles, stride, dilation, groups, lhs dilation, a split k range and a fused epilogue.
let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await gpuBackend({
    conv: {
      tileM: 64,
      tileN: 128,
      tileK: 16,
      threadM: 8,
      threadN: 8,
      padA: 4,
      unroll: false,
      splitGroups: 528,
      minChunk: 64,
    },
  });
});
afterAll(() => gpu?.destroy());

const P = (o: Partial<ConvParams>): ConvParams => ({
  stride: [1, 1],
  padding: [
    [0, 0],
    [0, 0],
  ],
  dilation: [1, 1],
  lhsDilation: [1, 1],
  groups: 1,
  ...o,
});

const cases: { what: string; x: number[]; w: number[]; p: ConvParams }[] = [
  {
    what: '70 channels (two row tiles), 9x11 pad 1',
    x: [3, 5, 9, 11],
    w: [70, 5, 3, 3],
    p: P({
      padding: [
        [1, 1],
        [1, 1],
      ],
    }),
  },
  {
    what: 'stride 2, dilation (2, 1), groups 2, asymmetric padding',
    x: [2, 6, 13, 10],
    w: [8, 3, 3, 2],
    p: P({
      stride: [2, 2],
      dilation: [2, 1],
      padding: [
        [1, 2],
        [0, 1],
      ],
      groups: 2,
    }),
  },
  {
    what: 'lhs dilation (2, 3), stride (1, 2)',
    x: [2, 4, 5, 6],
    w: [6, 4, 3, 3],
    p: P({
      lhsDilation: [2, 3],
      padding: [
        [2, 2],
        [1, 2],
      ],
      stride: [1, 2],
    }),
  },
  {
    what: 'depthwise (32-row tiles)',
    x: [2, 8, 7, 9],
    w: [8, 1, 3, 3],
    p: P({
      groups: 8,
      padding: [
        [1, 1],
        [1, 1],
      ],
    }),
  },
  {
    what: 'weight-gradient shape: long k split over workgroups, groups 2',
    x: [4, 24, 13, 11],
    w: [6, 12, 11, 9],
    p: P({
      groups: 2,
      padding: [
        [1, 0],
        [0, 1],
      ],
    }),
  },
];

testGpu(
  'conv under the hardware tiling matches the CPU backend',
  async () => {
    let seed = 900;
    for (const c of cases) {
      const [xg, xc] = twin(gpu, c.x, seed++);
      const [wg, wc] = twin(gpu, c.w, seed++);
      const yg = convNd(xg, wg, c.p),
        yc = convNd(xc, wc, c.p);
      expect(yg.shape).toEqual(yc.shape);
      const k = c.w[1] * c.w[2] * c.w[3];
      expectClose((await yg.data()) as Float32Array, (await yc.data()) as Float32Array, 1e-4, 1e-5 * k, c.what);
      for (const t of [xg, xc, wg, wc, yg, yc]) t.dispose();
    }
  },
  120000,
);

testGpu(
  'conv epilogue (bias + relu) under the hardware tiling, long k (no split with an epilogue)',
  async () => {
    const p = P({
      padding: [
        [2, 2],
        [2, 2],
      ],
    });
    const [xg, xc] = twin(gpu, [2, 30, 9, 7], 950);
    const [wg, wc] = twin(gpu, [20, 30, 5, 5], 951);
    const [bg, bc] = twin(gpu, [1, 20, 1, 1], 952);
    const epi = (b: NDArray) => ({ expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [b] });
    const yg = convNd(xg, wg, p, epi(bg)),
      yc = convNd(xc, wc, p, epi(bc));
    expectClose((await yg.data()) as Float32Array, (await yc.data()) as Float32Array, 1e-4, 1e-5 * 750, 'bias + relu');
    for (const t of [xg, xc, wg, wc, bg, bc, yg, yc]) t.dispose();
  },
  120000,
);
