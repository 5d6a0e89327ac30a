import type { PoolParams } from '../pool-params';
import { avgPoolDivisors } from '../pool';
import { View } from '../view';

/**
 * The contract's pool on the CPU: one pass over the output, each cell reading its window's
 * in-range taps through x's strides (see PoolParams for the rule). Max keeps the first
 * largest value (NaN counts as largest) and its tap index.
 */
export function poolInto(x: Float32Array, xv: View, p: PoolParams, out: Float32Array, arg: Int32Array | null): void {
  if (tiles(p, xv.shape[2], xv.shape[3])) return poolTiles(x, xv, p, out, arg);
  const [n, c, h, w] = xv.shape;
  const [sn, sc, sh, sw] = xv.strides;
  const [kH, kW] = p.kernel,
    [oH, oW] = p.out;
  const div = p.kind === 'avg' ? avgPoolDivisors(p, h, w) : null;
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const plane = xv.offset + b * sn + ch * sc;
      for (let oh = 0; oh < oH; oh++) {
        const h0 = oh * p.stride[0] - p.padding[0];
        for (let ow = 0; ow < oW; ow++, o++) {
          const w0 = ow * p.stride[1] - p.padding[1];
          let acc = p.kind === 'max' ? -Infinity : 0;
          let best = -1;
          for (let i = 0; i < kH; i++) {
            const y = h0 + i * p.dilation[0];
            if (y < 0 || y >= h) continue;
            for (let j = 0; j < kW; j++) {
              const xx = w0 + j * p.dilation[1];
              if (xx < 0 || xx >= w) continue;
              const v = x[plane + y * sh + xx * sw];
              if (p.kind === 'avg') acc += v;
              else if (best < 0 || v > acc || (v !== v && acc === acc)) {
                acc = v;
                best = i * kW + j;
              }
            }
          }
          out[o] = div ? acc / div[oh * oW + ow] : acc;
          if (arg) arg[o] = best;
        }
      }
    }
  }
}

/**
 * The pool's gradient as a gather: each input element sums, over the taps (i, j) whose
 * window (oh, ow) lands on it, gy (max: only where that window's chosen tap is (i, j); avg:
 * divided by the window's count). No output cell is written twice, so no atomics are needed
 * on a GPU, and the sum's order is fixed.
 */
export function poolBackwardInto(
  gy: Float32Array,
  gv: View,
  arg: Int32Array | null,
  av: View | null,
  p: PoolParams,
  inShape: readonly number[],
  out: Float32Array,
): void {
  if (tiles(p, inShape[2], inShape[3])) return poolBackwardTiles(gy, gv, arg, av, p, inShape, out);
  const [n, c, h, w] = inShape;
  const kW = p.kernel[1],
    oW = p.out[1];
  const [gn, gc, gh, gw] = gv.strides;
  const div = arg ? null : avgPoolDivisors(p, h, w);
  // The taps that land on each row and column, in the loops' order (i, then j, ascending):
  // the same terms summed in the same order as testing every tap, without the tests.
  const ys = landingTaps(h, p.kernel[0], p.padding[0], p.dilation[0], p.stride[0], p.out[0]);
  const xs = landingTaps(w, kW, p.padding[1], p.dilation[1], p.stride[1], oW);
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const gp = gv.offset + b * gn + ch * gc;
      const ap = av ? av.offset + b * av.strides[0] + ch * av.strides[1] : 0;
      for (let y = 0; y < h; y++) {
        for (let xx = 0; xx < w; xx++, o++) {
          let acc = 0;
          for (let a = ys.start[y]; a < ys.start[y + 1]; a++) {
            const i = ys.tap[a],
              oh = ys.out[a];
            for (let q = xs.start[xx]; q < xs.start[xx + 1]; q++) {
              const j = xs.tap[q],
                ow = xs.out[q];
              const g = gy[gp + oh * gh + ow * gw];
              if (arg) {
                if (arg[ap + oh * av!.strides[2] + ow * av!.strides[3]] === i * kW + j) acc += g;
              } else {
                acc += g / div![oh * oW + ow];
              }
            }
          }
          out[o] = acc;
        }
      }
    }
  }
}

/**
 * For each input position 0..size-1 along one axis, the kernel taps t whose window lands on
 * it and that window's output index: position = out·stride − pad + t·dilation. Entries for
 * position y are start[y]..start[y+1]-1 of tap/out, taps ascending.
 */
function landingTaps(
  size: number,
  kernel: number,
  pad: number,
  dilation: number,
  stride: number,
  outSize: number,
): { start: Int32Array; tap: Int32Array; out: Int32Array } {
  const start = new Int32Array(size + 1);
  const tap: number[] = [],
    out: number[] = [];
  for (let y = 0; y < size; y++) {
    start[y] = tap.length;
    for (let t = 0; t < kernel; t++) {
      const ty = y + pad - t * dilation;
      if (ty < 0 || ty % stride !== 0 || ty / stride >= outSize) continue;
      tap.push(t);
      out.push(ty / stride);
    }
  }
  start[size] = tap.length;
  return { start, tap: Int32Array.from(tap), out: Int32Array.from(out) };
}

/**
 * Whether the windows tile the input: stride = kernel, no padding or dilation, every window
 * inside (a CNN's 2x2 stride-2 pool). Then each input element is in at most one window, so
 * the forward needs no bounds checks and the backward is a scatter of each cell's gradient
 * into its own window (the gather above with one term per element: the same values).
 */
function tiles(p: PoolParams, h: number, w: number): boolean {
  return (
    p.stride[0] === p.kernel[0] &&
    p.stride[1] === p.kernel[1] &&
    p.padding[0] === 0 &&
    p.padding[1] === 0 &&
    p.dilation[0] === 1 &&
    p.dilation[1] === 1 &&
    p.out[0] * p.kernel[0] <= h &&
    p.out[1] * p.kernel[1] <= w
  );
}

function poolTiles(x: Float32Array, xv: View, p: PoolParams, out: Float32Array, arg: Int32Array | null): void {
  const [n, c] = xv.shape;
  const [sn, sc, sh, sw] = xv.strides;
  const [kH, kW] = p.kernel,
    [oH, oW] = p.out;
  const max = p.kind === 'max';
  const div = kH * kW;
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const plane = xv.offset + b * sn + ch * sc;
      for (let oh = 0; oh < oH; oh++) {
        for (let ow = 0; ow < oW; ow++, o++) {
          const corner = plane + oh * kH * sh + ow * kW * sw;
          let acc = max ? x[corner] : 0;
          let best = 0;
          for (let i = 0; i < kH; i++) {
            for (let j = 0, q = corner + i * sh; j < kW; j++, q += sw) {
              const v = x[q];
              if (!max) acc += v;
              else if (v > acc || (v !== v && acc === acc)) {
                acc = v;
                best = i * kW + j;
              }
            }
          }
          out[o] = max ? acc : acc / div;
          if (arg) arg[o] = best;
        }
      }
    }
  }
}

function poolBackwardTiles(
  gy: Float32Array,
  gv: View,
  arg: Int32Array | null,
  av: View | null,
  p: PoolParams,
  inShape: readonly number[],
  out: Float32Array,
): void {
  const [n, c, h, w] = inShape;
  const [kH, kW] = p.kernel,
    [oH, oW] = p.out;
  const [gn, gc, gh, gw] = gv.strides;
  const div = kH * kW;
  out.fill(0, 0, n * c * h * w);
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const gp = gv.offset + b * gn + ch * gc;
      const ap = av ? av.offset + b * av.strides[0] + ch * av.strides[1] : 0;
      const op = (b * c + ch) * h * w;
      for (let oh = 0; oh < oH; oh++) {
        for (let ow = 0; ow < oW; ow++) {
          const g = gy[gp + oh * gh + ow * gw];
          const corner = op + oh * kH * w + ow * kW;
          if (arg) {
            const t = arg[ap + oh * av!.strides[2] + ow * av!.strides[3]];
            // 0 + g, as the gather sums it: a -0 gradient lands as +0.
            out[corner + Math.floor(t / kW) * w + (t % kW)] = 0 + g;
          } else {
            const v = 0 + g / div;
            for (let i = 0; i < kH; i++) for (let j = 0; j < kW; j++) out[corner + i * w + j] = v;
          }
        }
      }
    }
  }
}
