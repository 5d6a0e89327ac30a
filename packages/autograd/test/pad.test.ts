import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Backend, CpuBackend, SurfTypeError, ValueError } from '@surf/core';
import { PadMode, Tensor, pad, setBackend, tensor } from '@surf/autograd';
import { describeEach, gpuBackend } from './gpu';

// torch.nn.functional.pad against PyTorch's values and gradients, written once by
// scripts/interop/make-pad-fixtures.py (fixtures/pad.json), on both backends.

interface Case {
  shape: number[];
  pad: number[];
  mode: PadMode;
  value?: number;
  outShape: number[];
  out: number[];
  grad: number[];
}
const { cases } = JSON.parse(readFileSync(join(__dirname, 'fixtures/pad.json'), 'utf8')) as { cases: Case[] };

const input = (shape: number[]) => {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(
    Float32Array.from({ length: n }, (_, i) => i * 0.5 - 1),
    { requiresGrad: true },
  )
    .reshape(shape)
    .detach()
    .requiresGrad_();
};

const near = (got: ArrayLike<number>, want: number[], tol = 1e-5) => {
  expect(got.length).toBe(want.length);
  Array.from(got).forEach((g, i) =>
    expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(want[i]))),
  );
};

describeEach(['cpu', 'webgpu'], 'pad', (kind) => {
  let backend: Backend | undefined;
  let prev: Backend | undefined;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    backend?.destroy();
  });

  test.each(cases.map((c) => [`${c.mode} ${JSON.stringify(c.pad)} of [${c.shape}]`, c] as const))(
    '%s: values and gradient as PyTorch',
    async (_name, c) => {
      const x = input(c.shape);
      const y = c.mode === 'constant' ? pad(x, c.pad, { value: c.value }) : x.pad(c.pad, { mode: c.mode });
      expect(y.shape).toEqual(c.outShape);
      near(await y.data(), c.out);
      const w = tensor(Float32Array.from({ length: y.numel }, (_, k) => Math.sin(k + 1))).reshape(c.outShape);
      y.mul(w).sum().backward();
      near(await (x.grad as Tensor).data(), c.grad);
    },
  );

  test('the default is constant zero padding of the last dim first', async () => {
    const x = tensor([
      [1, 2],
      [3, 4],
    ]);
    expect(await x.pad([1, 0]).toArray()).toEqual([
      [0, 1, 2],
      [0, 3, 4],
    ]);
    expect(await pad(x, [0, 0, 0, 1]).toArray()).toEqual([
      [1, 2],
      [3, 4],
      [0, 0],
    ]);
  });

  test('bad arguments are named errors', () => {
    const x = tensor([[1, 2, 3]]);
    expect(() =>
      x.pad([
        [0, 1],
        [1, 0],
      ] as never),
    ).toThrow(SurfTypeError);
    expect(() => x.pad([1])).toThrow(/pad: padding \[1\] must be an even number of integers/);
    expect(() => x.pad([1, 1, 1, 1, 1, 1])).toThrow(ValueError);
    expect(() => x.pad([3, 0], { mode: 'reflect' })).toThrow(
      /reflect padding 3, 0 of dim 1 must be smaller than its size 3/,
    );
    expect(() => x.pad([4, 0], { mode: 'circular' })).toThrow(
      /circular padding 4, 0 of dim 1 must be at most its size 3/,
    );
    expect(() => x.pad([1, 1], { mode: 'reflect', value: 2 })).toThrow(/value 2 is only used by mode 'constant'/);
    expect(() => x.pad([1, 1], { mode: 'edge' as never })).toThrow(ValueError);
    expect(() => x.pad([1, 1], { mdoe: 'reflect' } as never)).toThrow(
      /pad: unknown option 'mdoe'; did you mean 'mode'\?/,
    );
  });
});
