import {
  Backend,
  CpuBackend,
  NDArray,
  PoolParams,
  ShapeError,
  ValueError,
  poolBackwardNd,
  poolNd,
  randomArray,
} from '@surf/core';
import { describeEach, gpuBackend } from '../../gpu';

// The contract's pool2d / pool2dBackward on both backends against loops written here: PyTorch's
// window rule, the first maximum (NaN largest) and its tap, PyTorch's average divisors, and the
// gradient summed over overlapping windows; a transposed (strided) input view.

const P = (o: Partial<PoolParams> & Pick<PoolParams, 'kind' | 'out'>): PoolParams => ({
  kernel: [2, 2],
  stride: [2, 2],
  padding: [0, 0],
  dilation: [1, 1],
  countIncludePad: true,
  ...o,
});

interface Ref {
  y: number[];
  arg: number[];
  dx: number[];
}

/** Forward and backward by the definition, for x [N, C, H, W] (row-major) and gy of the output's shape. */
function reference(x: Float32Array, shape: number[], p: PoolParams, gy: Float32Array): Ref {
  const [n, c, h, w] = shape;
  const [oH, oW] = p.out;
  const y: number[] = [],
    arg: number[] = [];
  const dx = new Array<number>(x.length).fill(0);
  for (let pl = 0; pl < n * c; pl++) {
    for (let oh = 0; oh < oH; oh++) {
      for (let ow = 0; ow < oW; ow++) {
        const taps: [number, number][] = [];
        for (let i = 0; i < p.kernel[0]; i++) {
          for (let j = 0; j < p.kernel[1]; j++) {
            const yy = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
            const xx = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) taps.push([i * p.kernel[1] + j, pl * h * w + yy * w + xx]);
          }
        }
        const g = gy[(pl * oH + oh) * oW + ow];
        if (p.kind === 'max') {
          let best = taps[0];
          for (const t of taps) if (Number.isNaN(x[t[1]]) ? !Number.isNaN(x[best[1]]) : x[t[1]] > x[best[1]]) best = t;
          y.push(x[best[1]]);
          arg.push(best[0]);
          dx[best[1]] += g;
        } else {
          // PyTorch: the window clipped to the padded input (countIncludePad) or to the input.
          const cnt = [0, 1].map((d) => {
            const o = d === 0 ? oh : ow;
            const len = shape[2 + d];
            const st = o * p.stride[d] - p.padding[d];
            const en = Math.min(st + p.kernel[d], len + p.padding[d]);
            return p.countIncludePad ? en - st : Math.min(en, len) - Math.max(st, 0);
          });
          const div = cnt[0] * cnt[1];
          y.push(taps.reduce((a, t) => a + x[t[1]], 0) / div);
          for (const t of taps) dx[t[1]] += g / div;
        }
      }
    }
  }
  return { y, arg, dx };
}

const cases: { what: string; shape: number[]; p: PoolParams; special?: boolean; plain?: boolean }[] = [
  { what: 'max 2x2 tiling', shape: [2, 3, 6, 8], p: P({ kind: 'max', out: [3, 4] }) },
  // Plain rows of a width that divides by 4: WebGPU's vector kernels (kernels/pool/pool2d-fast.ts).
  {
    what: 'max 2x2 tiling, plain rows, with NaN, -inf and ties',
    shape: [2, 3, 4, 8],
    p: P({ kind: 'max', out: [2, 4] }),
    special: true,
    plain: true,
  },
  { what: 'avg 2x2 tiling, plain rows', shape: [2, 2, 4, 12], p: P({ kind: 'avg', out: [2, 6] }), plain: true },
  {
    what: 'max 3x3 stride 2 pad 1 ceil (overlapping, last window clipped)',
    shape: [1, 2, 7, 6],
    p: P({ kind: 'max', kernel: [3, 3], stride: [2, 2], padding: [1, 1], out: [4, 4] }),
  },
  {
    what: 'max [2,3] stride [3,2] dilation 2',
    shape: [1, 2, 8, 9],
    p: P({ kind: 'max', kernel: [2, 3], stride: [3, 2], dilation: [2, 2], out: [2, 3] }),
  },
  {
    what: 'max with NaN, -inf and ties',
    shape: [1, 1, 4, 6],
    p: P({ kind: 'max', kernel: [2, 3], stride: [1, 1], out: [3, 4] }),
    special: true,
  },
  {
    what: 'avg 3x3 stride 2 pad 1 ceil, countIncludePad',
    shape: [2, 2, 6, 5],
    p: P({ kind: 'avg', kernel: [3, 3], stride: [2, 2], padding: [1, 1], out: [4, 3] }),
  },
  {
    what: 'avg 3x3 stride 2 pad 1 ceil, countIncludePad false',
    shape: [2, 2, 6, 5],
    p: P({ kind: 'avg', kernel: [3, 3], stride: [2, 2], padding: [1, 1], out: [4, 3], countIncludePad: false }),
  },
  {
    what: 'avg 2x2 stride 1 pad 1',
    shape: [1, 3, 3, 4],
    p: P({ kind: 'avg', stride: [1, 1], padding: [1, 1], out: [4, 5] }),
  },
];

describeEach(['cpu', 'webgpu'] as const, 'pool2d on %s', (kind) => {
  let be: Backend | null = null;
  beforeAll(async () => {
    be = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
  });
  afterAll(() => {
    if (kind === 'webgpu') be?.destroy();
  });

  test.each(cases)('$what: forward, tap indices and gradient match the loops', async ({ shape, p, special, plain }) => {
    const backend = be!;
    const size = shape.reduce((a, b) => a * b, 1);
    const x = randomArray('uniform', size, 41, -1, 1) as Float32Array;
    if (special) {
      x[0] = x[1] = 0.75;
      x[2] = NaN;
      x[9] = -Infinity;
      x[14] = NaN;
      x[20] = x[21] = x[22] = -0.5;
    }
    const outSize = shape[0] * shape[1] * p.out[0] * p.out[1];
    const gy = randomArray('uniform', outSize, 42, -1, 1) as Float32Array;
    const want = reference(x, shape, p, gy);
    // The input arrives transposed in memory (strided view): [N, C, W, H] data permuted back;
    // or as plain rows.
    const [n, c, h, w] = shape;
    const xt = new Float32Array(size);
    for (let pl = 0; pl < n * c; pl++)
      for (let i = 0; i < h; i++) for (let j = 0; j < w; j++) xt[pl * h * w + j * h + i] = x[pl * h * w + i * w + j];
    const stored = plain ? NDArray.fromData(backend, x, shape) : NDArray.fromData(backend, xt, [n, c, w, h]);
    const xv = plain ? stored.reshape(shape) : stored.permute([0, 1, 3, 2]);
    const [y, arg] = poolNd(xv, p);
    expect(y.shape).toEqual([n, c, p.out[0], p.out[1]]);
    const got = Array.from((await y.data()) as Float32Array);
    got.forEach((v, i) => {
      if (Number.isNaN(want.y[i])) expect(v).toBeNaN();
      else expect(v).toBeCloseTo(want.y[i], 5);
    });
    if (p.kind === 'max') expect(Array.from((await arg!.data()) as Int32Array)).toEqual(want.arg);
    else expect(arg).toBeNull();
    const g = NDArray.fromData(backend, gy, y.shape);
    const dx = poolBackwardNd(g, arg, p, shape);
    const gotDx = (await dx.data()) as Float32Array;
    gotDx.forEach((v, i) => expect(v).toBeCloseTo(want.dx[i], 5));
    for (const t of [stored, xv, y, g, dx, arg]) t?.dispose();
  });

  test('bad arguments are clear errors', () => {
    const x = NDArray.fromData(be!, new Float32Array(16), [1, 1, 4, 4]);
    expect(() => poolNd(x, P({ kind: 'avg', dilation: [2, 2], out: [2, 2] }))).toThrow(/no dilation/);
    expect(() => poolNd(x, P({ kind: 'max', kernel: [2, 2], padding: [2, 0], out: [2, 2] }))).toThrow(
      /at most half the kernel/,
    );
    expect(() => poolNd(x, P({ kind: 'max', out: [5, 2] }))).toThrow(ShapeError);
    const g = NDArray.fromData(be!, new Float32Array(4), [1, 1, 2, 2]);
    expect(() => poolBackwardNd(g, null, P({ kind: 'max', out: [2, 2] }), [1, 1, 4, 4])).toThrow(ValueError);
    expect(() => poolBackwardNd(g, g, P({ kind: 'max', out: [2, 2] }), [1, 1, 4, 4])).toThrow(/int32/);
    x.dispose();
    g.dispose();
  });
});
