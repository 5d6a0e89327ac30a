import '@surf/webgpu';
import { Backend } from '@surf/core';
import { conv2d, gradcheck, manualSeed, randn, setBackend } from '@surf/autograd';
import { gpuBackend, testGpu } from '../gpu';

// conv2d's input, weight and bias gradients by finite differences on a WebGPU backend whose
// stride-1 5x5 and 3x3 convs all take the Winograd paths (threshold knob forced, small tiles):
// the forward and the data gradient as F(2x2, r x r) or F(4x4, r x r), the weight gradient as
// F(r x r, 2x2) or F(r x r, 4x4) over the kernel (webgpu-backend/src/kernels/conv/winograd*.ts).
const gpus = new Map<string, Backend>();
afterAll(() => {
  for (const b of gpus.values()) b.destroy();
});

// Forward tile 2 (the folded GEMM) with 2x2 kernel blocks for the weight gradient, and tile 4
// (the batched matmul) with 4x4 blocks.
testGpu.each([
  [5, 2, 8, 9, 2],
  [5, 0, 11, 10, 2],
  [3, 1, 7, 8, 2],
  [5, 2, 8, 9, 4],
])(
  'gradcheck of conv2d (kernel %i, padding %i, input %ix%i, Winograd tiles %i) on the Winograd paths',
  async (k, padding, h, w, tile) => {
    const key = String(tile);
    if (!gpus.has(key))
      gpus.set(
        key,
        await gpuBackend({
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
        }),
      );
    const prev = setBackend(gpus.get(key)!);
    try {
      manualSeed(31 + k + h);
      // Two images, two input and three output channels: every index the paths take (batch,
      // channel blocks, partial tiles) at 60% of the finite differences of 2x3 -> 4 channels.
      const x = randn([2, 2, h, w], { requiresGrad: true });
      const wt = randn([3, 2, k, k], { requiresGrad: true });
      const b = randn([3], { requiresGrad: true });
      const r = await gradcheck((a, c, d) => conv2d(a, c, d, { padding }), [x, wt, b]);
      expect(r.summary).toMatch(/^ok/);
    } finally {
      setBackend(prev);
    }
  },
  120000,
);
