import { ConvParams, E, NDArray, convNd } from '@surf/core';
import { assertCase, opCases } from '@surf/core/testing';
import { WebGPUBackend } from '@surf/webgpu';
import { expectClose, twin } from '../../cpu-compare';
import { describeGpu, gpuBackend, testGpu } from '../../gpu';

// The Winograd conv path (kernels/conv/winograd.ts), forced on tiny shapes by its threshold knob
// (wino: any size), with small tiles so SwiftShader compiles it quickly, against the CPU
// backend's direct conv: 5x5 as F(2x2, 5x5), 3x3 as F(2x2, 3x3), odd sizes no tile divides,
// padding 2, 0 and asymmetric, channel counts off the tile, a fused epilogue, and the data and
// weight gradients of a stride-1 conv as autograd forms them (permuted and flipped views).
// Each case also checks that the path was taken: three dispatches (filter, input, GEMM).
let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await gpuBackend({
    conv: { wino: 1e-9, wino3: true, winoTM: 16, winoTN: 16, winoTK: 4, winoRM: 4, winoRN: 4, unroll: false },
  });
});
afterAll(() => gpu?.destroy());

const P = (pad: [[number, number], [number, number]]): ConvParams => ({
  stride: [1, 1],
  padding: pad,
  dilation: [1, 1],
  lhsDilation: [1, 1],
  groups: 1,
});
const sym = (p: number) =>
  P([
    [p, p],
    [p, p],
  ]);

async function check(
  xg: NDArray,
  wg: NDArray,
  xc: NDArray,
  wc: NDArray,
  p: ConvParams,
  what: string,
  dispatches = 3,
  epi?: { g: NDArray; c: NDArray },
  b: WebGPUBackend = gpu,
) {
  const before = b.stats().dispatches;
  const ep = (b: NDArray) => ({ expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [b] });
  const yg = convNd(xg, wg, p, epi ? ep(epi.g) : undefined),
    yc = convNd(xc, wc, p, epi ? ep(epi.c) : undefined);
  expect(b.stats().dispatches - before).toBe(dispatches);
  expect(yg.shape).toEqual(yc.shape);
  const got = (await yg.data()) as Float32Array,
    want = (await yc.data()) as Float32Array;
  // Tolerance: the op table's conv tolerance scaled by the reduction length, and a relative-norm check.
  const k = wc.shape[1] * wc.shape[2] * wc.shape[3];
  expectClose(got, want, 1e-4, 1e-5 * k, what);
  let num = 0,
    den = 0;
  for (let i = 0; i < want.length; i++) {
    num += (got[i] - want[i]) ** 2;
    den += want[i] ** 2;
  }
  expect(Math.sqrt(num / den)).toBeLessThan(1e-5);
  yg.dispose();
  yc.dispose();
}

const cases: { what: string; x: number[]; w: number[]; p: ConvParams }[] = [
  { what: '5x5 pad 2, 9x11, 7 output channels, 5 input channels', x: [3, 5, 9, 11], w: [7, 5, 5, 5], p: sym(2) },
  { what: '5x5 pad 0, 10x7 (odd output width)', x: [2, 6, 10, 7], w: [4, 6, 5, 5], p: sym(0) },
  {
    what: '5x5 asymmetric padding, 33 output channels (three row tiles)',
    x: [2, 3, 8, 9],
    w: [33, 3, 5, 5],
    p: P([
      [2, 1],
      [0, 2],
    ]),
  },
  { what: '3x3 pad 1, 7x9', x: [2, 5, 7, 9], w: [6, 5, 3, 3], p: sym(1) },
  { what: '3x3 pad 0, one output row', x: [3, 4, 3, 12], w: [5, 4, 3, 3], p: sym(0) },
];

testGpu(
  'Winograd conv matches the CPU backend: F(2x2, r x r), GEMM with the output transform folded in',
  async () => {
    let seed = 1300;
    for (const c of cases) {
      const [xg, xc] = twin(gpu, c.x, seed++);
      const [wg, wc] = twin(gpu, c.w, seed++);
      await check(xg, wg, xc, wc, c.p, c.what);
      for (const t of [xg, xc, wg, wc]) t.dispose();
    }
  },
  120000,
);

testGpu(
  'Winograd conv matches the CPU backend: F(4x4, r x r) through the batched matmul (four dispatches)',
  async () => {
    const b = await gpuBackend({ conv: { wino: 1e-9, wino3: true, winoTile: 4, unroll: false } });
    let seed = 1400;
    for (const c of cases) {
      const [xg, xc] = twin(b, c.x, seed++);
      const [wg, wc] = twin(b, c.w, seed++);
      await check(xg, wg, xc, wc, c.p, c.what, 4, undefined, b);
      for (const t of [xg, xc, wg, wc]) t.dispose();
    }
    const [xg, xc] = twin(b, [2, 6, 9, 10], 1450);
    const [wg, wc] = twin(b, [20, 6, 5, 5], 1451);
    const [bg, bc] = twin(b, [1, 20, 1, 1], 1452);
    await check(xg, wg, xc, wc, sym(2), 'bias + relu', 4, { g: bg, c: bc }, b);
    for (const t of [xg, xc, wg, wc, bg, bc]) t.dispose();
    b.destroy();
  },
  120000,
);

testGpu(
  'Winograd conv with a fused bias + relu epilogue',
  async () => {
    const [xg, xc] = twin(gpu, [2, 6, 9, 9], 1350);
    const [wg, wc] = twin(gpu, [20, 6, 5, 5], 1351);
    const [bg, bc] = twin(gpu, [1, 20, 1, 1], 1352);
    await check(xg, wg, xc, wc, sym(2), 'bias + relu', 3, { g: bg, c: bc });
    for (const t of [xg, xc, wg, wc, bg, bc]) t.dispose();
  },
  120000,
);

// The weight gradient's Winograd form (kernels/conv/winograd-large-kernel.ts) with 2x2 and 4x4 kernel blocks: five
// dispatches with the k split over workgroups (splitGroups high), four without.
testGpu.each([
  [5, 2, 9, 7, 200, 5, 2],
  [5, 0, 12, 11, 4, 4, 2],
  [3, 1, 9, 10, 200, 5, 2],
  [5, 2, 9, 7, 200, 5, 4],
  [5, 0, 12, 11, 4, 4, 4],
  [3, 1, 11, 10, 200, 5, 4],
])(
  'the gradients of a stride-1 conv (kernel %i, pad %i, input %ix%i, splitGroups %i, %i dispatches, kernel blocks %i) on the Winograd paths',
  async (k, pad, h, w, splitGroups, wd, winoBlock) => {
    const b = await gpuBackend({
      conv: {
        wino: 1e-9,
        wino3: true,
        winoTM: 16,
        winoTN: 16,
        winoTK: 4,
        winoRM: 4,
        winoRN: 4,
        unroll: false,
        splitGroups,
        winoBlock,
      },
    });
    const [n, c, o] = [3, 4, 6];
    const oh = h + 2 * pad - k + 1,
      ow = w + 2 * pad - k + 1;
    const [xg, xc] = twin(b, [n, c, h, w], 1360 + k);
    const [wg, wc] = twin(b, [o, c, k, k], 1361 + k);
    const [gg, gc] = twin(b, [n, o, oh, ow], 1362 + k);
    // Data gradient: gy with the channel-swapped, flipped weight (negative strides), pad k-1-pad.
    const flip = (a: NDArray) => a.permute([1, 0, 2, 3]).flip([2, 3]);
    const [wtg, wtc] = [flip(wg), flip(wc)];
    await check(gg, wtg, gc, wtc, sym(k - 1 - pad), 'data gradient', 3, undefined, b);
    // Weight gradient: x as [C, N, ...] with gy [O, N, ...] as the kernel; output [C, O, k, k].
    const sw = (a: NDArray) => a.permute([1, 0, 2, 3]);
    const [xtg, xtc, gtg, gtc] = [sw(xg), sw(xc), sw(gg), sw(gc)];
    await check(xtg, gtg, xtc, gtc, sym(pad), 'weight gradient', wd, undefined, b);
    for (const t of [xg, xc, wg, wc, gg, gc, wtg, wtc, xtg, xtc, gtg, gtc]) t.dispose();
    b.destroy();
  },
  120000,
);

testGpu(
  'off below the threshold, and for strided, dilated or grouped 5x5 convs',
  async () => {
    const b = await gpuBackend({ conv: { wino: 1e3 } });
    const [xg] = twin(b, [2, 4, 9, 9], 1370);
    const [wg] = twin(b, [4, 4, 5, 5], 1371);
    const before = b.stats().dispatches;
    convNd(xg, wg, sym(2)).dispose();
    expect(b.stats().dispatches - before).toBe(1);
    const [xs] = twin(gpu, [2, 4, 9, 9], 1372);
    const [ws] = twin(gpu, [4, 2, 5, 5], 1373);
    const [wf] = twin(gpu, [4, 4, 5, 5], 1374);
    for (const [xx, ww, p] of [
      [xs, wf, { ...sym(2), stride: [2, 2] }],
      [xs, wf, { ...sym(4), dilation: [2, 2] }],
      [xs, ws, { ...sym(2), groups: 2 }],
    ] as const) {
      const t0 = gpu.stats().dispatches;
      convNd(xx, ww, p as ConvParams).dispose();
      expect(gpu.stats().dispatches - t0).toBeLessThanOrEqual(2);
    }
    for (const t of [xg, wg, xs, ws, wf]) t.dispose();
    b.destroy();
  },
  120000,
);

// The shared op table's conv cases (tolerance: TOL.accumulate against the float64 reference)
// with every eligible conv forced onto the Winograd paths, both tilings.
describeGpu.each([2, 4])('the op table conv cases with Winograd tiles %i', (tile) => {
  let b: WebGPUBackend;
  beforeAll(async () => {
    b = await gpuBackend({
      conv: {
        wino: 1e-9,
        wino3: true,
        winoTM: 16,
        winoTN: 16,
        winoTK: 4,
        winoRM: 4,
        winoRN: 4,
        unroll: false,
        splitGroups: 200,
        winoTile: tile,
        winoBlock: tile,
      },
    });
  });
  afterAll(() => b?.destroy());
  it.each(opCases({ groups: ['conv'] }).map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      await assertCase(c, b);
    },
    120000,
  );
});
