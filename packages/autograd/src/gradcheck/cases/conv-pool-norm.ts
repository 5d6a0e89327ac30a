import { conv1d, conv2d, convTranspose2d } from '../../ops/conv';
import { adaptiveAvgPool2d, avgPool2d, maxPool2d } from '../../ops/pool';
import { batchNorm } from '../../ops/batch-norm';
import { Tensor } from '../../tensor';
import { tensor as tensorOf } from '../../creation';
import type { GradcheckCase } from '../case';
import { Host, at, build } from '../host';
import { InputSpec } from '../inputs';

/**
 * Gradient-check cases for the CNN ops. The forward references are the defining sums as
 * loops over the host arrays, written without the flip/lhs-dilation tricks the ops use.
 */
/** A constant tensor made inside a case (on the current backend). */
const rt = (v: number[]): Tensor => tensorOf(v);
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });

interface ConvRefOpts {
  stride?: number[];
  pad?: number[];
  dilation?: number[];
  groups?: number;
}

/** y[n,o,p] = b[o] + Σ_{c in group, kk} x[n, c, p·s + kk·d - pad] · w[o, c, kk] (zero outside). */
function convRef(x: Host, w: Host, b: Host | null, o: ConvRefOpts = {}): Host {
  const sd = x.shape.length - 2;
  const s = o.stride ?? new Array(sd).fill(1),
    p = o.pad ?? new Array(sd).fill(0),
    d = o.dilation ?? new Array(sd).fill(1),
    g = o.groups ?? 1;
  const [n, , ...ins] = x.shape;
  const [oc, cg, ...ks] = w.shape;
  const outs = ins.map((len, i) => Math.floor((len + 2 * p[i] - d[i] * (ks[i] - 1) - 1) / s[i]) + 1);
  return build([n, oc, ...outs], (idx) => {
    const grp = Math.floor(idx[1] / (oc / g));
    let acc = b ? b.data[idx[1]] : 0;
    for (let c = 0; c < cg; c++) {
      build(ks, (kk) => {
        const pos = kk.map((k, i) => idx[2 + i] * s[i] + k * d[i] - p[i]);
        if (pos.every((q, i) => q >= 0 && q < ins[i]))
          acc += at(x, [idx[0], grp * cg + c, ...pos]) * at(w, [idx[1], c, ...kk]);
        return 0;
      });
    }
    return acc;
  });
}

/** Transposed conv by its scatter definition: y[n, o, i·s - p + k·d] += x[n, c, i] · w[c, o', k]. */
function convTransposeRef(
  x: Host,
  w: Host,
  b: Host | null,
  s: number[],
  p: number[],
  op: number[],
  d: number[],
  g: number,
): Host {
  const [n, c, h, wd] = x.shape;
  const [, og, kH, kW] = w.shape;
  const cg = c / g;
  const oH = (h - 1) * s[0] - 2 * p[0] + d[0] * (kH - 1) + op[0] + 1;
  const oW = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kW - 1) + op[1] + 1;
  const out = build([n, og * g, oH, oW], (idx) => (b ? b.data[idx[1]] : 0));
  for (let b0 = 0; b0 < n; b0++)
    for (let ci = 0; ci < c; ci++)
      for (let i = 0; i < h; i++)
        for (let j = 0; j < wd; j++) {
          const grp = Math.floor(ci / cg);
          for (let o = 0; o < og; o++)
            for (let ki = 0; ki < kH; ki++)
              for (let kj = 0; kj < kW; kj++) {
                const y = i * s[0] - p[0] + ki * d[0],
                  xx = j * s[1] - p[1] + kj * d[1];
                if (y < 0 || y >= oH || xx < 0 || xx >= oW) continue;
                out.data[((b0 * og * g + grp * og + o) * oH + y) * oW + xx] +=
                  at(x, [b0, ci, i, j]) * at(w, [ci, o, ki, kj]);
              }
        }
  return out;
}

/** A pool by its definition: f over the window's in-range values (padding slots get `pad`, or are skipped when pad is null). */
function poolRef(
  x: Host,
  k: number[],
  s: number[],
  p: number[],
  d: number[],
  out: number[],
  f: (v: number[], full: number) => number,
): Host {
  const [n, c, h, w] = x.shape;
  return build([n, c, out[0], out[1]], (idx) => {
    const v: number[] = [];
    for (let i = 0; i < k[0]; i++)
      for (let j = 0; j < k[1]; j++) {
        const y = idx[2] * s[0] - p[0] + i * d[0],
          xx = idx[3] * s[1] - p[1] + j * d[1];
        if (y >= 0 && y < h && xx >= 0 && xx < w) v.push(at(x, [idx[0], idx[1], y, xx]));
      }
    return f(v, k[0] * k[1]);
  });
}

function batchNormRef(
  x: Host,
  w: Host | null,
  b: Host | null,
  mean: number[] | null,
  vars: number[] | null,
  eps: number,
): Host {
  const c = x.shape[1];
  const per = x.data.length / (x.shape[0] * c);
  const vals = (ch: number) => x.data.filter((_, i) => Math.floor(i / per) % c === ch);
  const mu = mean ?? Array.from({ length: c }, (_, ch) => vals(ch).reduce((a, q) => a + q, 0) / vals(ch).length);
  const va =
    vars ?? Array.from({ length: c }, (_, ch) => vals(ch).reduce((a, q) => a + (q - mu[ch]) ** 2, 0) / vals(ch).length);
  return {
    shape: x.shape.slice(),
    data: x.data.map((v, i) => {
      const ch = Math.floor(i / per) % c;
      return ((v - mu[ch]) / Math.sqrt(va[ch] + eps)) * (w ? w.data[ch] : 1) + (b ? b.data[ch] : 0);
    }),
  };
}

export function convPoolNormCases(): GradcheckCase[] {
  const max = (v: number[]) => Math.max(...v);
  return [
    {
      name: 'maxPool2d 2x2',
      op: 'maxPool2d',
      inputs: [sp([2, 2, 4, 5], 'transposed')],
      fn: (x) => maxPool2d(x, 2),
      forward: (x) => poolRef(x, [2, 2], [2, 2], [0, 0], [1, 1], [2, 2], max),
    },
    {
      name: 'maxPool2d 3x3 stride 2 pad 1 overlapping, ceilMode',
      op: 'maxPool2d',
      inputs: [sp([1, 2, 5, 6], 'flipped')],
      fn: (x) => maxPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true }),
      forward: (x) => poolRef(x, [3, 3], [2, 2], [1, 1], [1, 1], [3, 4], max),
    },
    {
      name: 'maxPool2d dilation 2, unbatched',
      op: 'maxPool2d',
      inputs: [sp([2, 5, 5])],
      fn: (x) => maxPool2d(x, [2, 2], { stride: 1, dilation: 2 }),
      forward: (x) => {
        const r = poolRef({ data: x.data, shape: [1, ...x.shape] }, [2, 2], [1, 1], [0, 0], [2, 2], [3, 3], max);
        return { data: r.data, shape: r.shape.slice(1) };
      },
    },
    {
      name: 'maxPool2d [2,3] stride [3,2] dilation 2 (taps at odd phases of the stride)',
      op: 'maxPool2d',
      inputs: [sp([1, 2, 8, 9])],
      fn: (x) => maxPool2d(x, [2, 3], { stride: [3, 2], dilation: 2 }),
      forward: (x) => poolRef(x, [2, 3], [3, 2], [0, 0], [2, 2], [2, 3], max),
    },
    {
      name: 'avgPool2d 2x2 stride 1 pad 1, countIncludePad',
      op: 'avgPool2d',
      inputs: [sp([2, 2, 3, 4], 'sliced')],
      fn: (x) => avgPool2d(x, 2, { stride: 1, padding: 1 }),
      forward: (x) =>
        poolRef(x, [2, 2], [1, 1], [1, 1], [1, 1], [4, 5], (v, full) => v.reduce((a, q) => a + q, 0) / full),
    },
    {
      name: 'avgPool2d 3x3 stride 2 pad 1, ceilMode, countIncludePad false',
      op: 'avgPool2d',
      inputs: [sp([1, 2, 6, 5])],
      fn: (x) => avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false }),
      forward: (x) =>
        poolRef(x, [3, 3], [2, 2], [1, 1], [1, 1], [4, 3], (v) => v.reduce((a, q) => a + q, 0) / v.length),
    },
    {
      name: 'adaptiveAvgPool2d 5x7 -> 3x2',
      op: 'adaptiveAvgPool2d',
      inputs: [sp([2, 2, 5, 7], 'transposed')],
      fn: (x) => adaptiveAvgPool2d(x, [3, 2]),
      forward: (x) =>
        build([2, 2, 3, 2], (idx) => {
          const [h, w] = [5, 7];
          let acc = 0,
            cnt = 0;
          for (let i = Math.floor((idx[2] * h) / 3); i < Math.ceil(((idx[2] + 1) * h) / 3); i++) {
            for (let j = Math.floor((idx[3] * w) / 2); j < Math.ceil(((idx[3] + 1) * w) / 2); j++) {
              acc += at(x, [idx[0], idx[1], i, j]);
              cnt++;
            }
          }
          return acc / cnt;
        }),
    },
    {
      name: 'batchNorm training [4,3,2,2] with affine and running stats',
      op: 'batchNorm',
      inputs: [sp([4, 3, 2, 2]), sp([3]), sp([3])],
      fn: (x, w, b) => batchNorm(x, null, null, w, b, { training: true }),
      forward: (x, w, b) => batchNormRef(x, w, b, null, null, 1e-5),
      atol: 2e-2,
    },
    {
      name: 'batchNorm training [5,3] (BatchNorm1d) no affine',
      op: 'batchNorm',
      inputs: [sp([5, 3], 'transposed')],
      fn: (x) => batchNorm(x, null, null, null, null, { training: true, eps: 1e-3 }),
      forward: (x) => batchNormRef(x, null, null, null, null, 1e-3),
      atol: 2e-2,
    },
    {
      name: 'batchNorm eval with running stats',
      op: 'batchNorm',
      inputs: [sp([2, 3, 4]), sp([3])],
      fn: (x, w) => batchNorm(x, rt([0.5, -1, 2]), rt([1.5, 0.25, 4]), w, null),
      forward: (x, w) => batchNormRef(x, w, null, [0.5, -1, 2], [1.5, 0.25, 4], 1e-5),
    },
    {
      name: 'conv2d pad 1 with bias',
      op: 'conv2d',
      inputs: [sp([2, 2, 4, 5]), sp([3, 2, 3, 3], 'transposed'), sp([3])],
      fn: (x, w, b) => conv2d(x, w, b, { padding: 1 }),
      forward: (x, w, b) => convRef(x, w, b, { pad: [1, 1] }),
    },
    {
      name: 'conv2d stride 2, dilation 2, groups 2',
      op: 'conv2d',
      inputs: [sp([1, 4, 6, 7], 'flipped'), sp([4, 2, 2, 2])],
      fn: (x, w) => conv2d(x, w, null, { stride: [2, 1], dilation: [1, 2], groups: 2, padding: [1, 0] }),
      forward: (x, w) => convRef(x, w, null, { stride: [2, 1], dilation: [1, 2], groups: 2, pad: [1, 0] }),
    },
    {
      name: "conv2d padding 'same' even kernel, unbatched",
      op: 'conv2d',
      inputs: [sp([2, 4, 4]), sp([2, 2, 2, 2])],
      fn: (x, w) => conv2d(x, w, null, { padding: 'same' }),
      forward: (x, w) => {
        // 'same' with k = 2: zero row/col on the high side only.
        const xp = build([1, 2, 5, 5], (i) => (i[2] < 4 && i[3] < 4 ? at(x, [i[1], i[2], i[3]]) : 0));
        const r = convRef(xp, w, null);
        return { data: r.data, shape: r.shape.slice(1) };
      },
    },
    {
      name: 'conv1d stride 2 pad 1 with bias',
      op: 'conv1d',
      inputs: [sp([2, 3, 7], 'sliced'), sp([4, 3, 3]), sp([4])],
      fn: (x, w, b) => conv1d(x, w, b, { stride: 2, padding: 1 }),
      forward: (x, w, b) => convRef(x, w, b, { stride: [2], pad: [1] }),
    },
    {
      name: 'convTranspose2d stride 2, padding 1, outputPadding 1, bias',
      op: 'convTranspose2d',
      inputs: [sp([2, 3, 3, 2]), sp([3, 2, 3, 3]), sp([2])],
      fn: (x, w, b) => convTranspose2d(x, w, b, { stride: 2, padding: 1, outputPadding: 1 }),
      forward: (x, w, b) => convTransposeRef(x, w, b, [2, 2], [1, 1], [1, 1], [1, 1], 1),
    },
    {
      name: 'convTranspose2d groups 2, dilation 2',
      op: 'convTranspose2d',
      inputs: [sp([1, 4, 3, 3], 'transposed'), sp([4, 1, 2, 2])],
      fn: (x, w) => convTranspose2d(x, w, null, { groups: 2, dilation: 2, stride: [1, 2] }),
      forward: (x, w) => convTransposeRef(x, w, null, [1, 2], [0, 0], [0, 0], [2, 2], 2),
    },
  ];
}
