import { conv1d, conv2d, convTranspose2d } from '../ops/conv';
import { GradcheckCase } from './cases';
import { Host, at, build } from './host';
import { InputSpec } from './inputs';

/**
 * Gradient-check cases for the CNN ops. The forward references are the defining sums as
 * loops over the host arrays, written without the flip/lhs-dilation tricks the ops use.
 */
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });

interface ConvRefOpts { stride?: number[]; pad?: number[]; dilation?: number[]; groups?: number }

/** y[n,o,p] = b[o] + Σ_{c in group, kk} x[n, c, p·s + kk·d - pad] · w[o, c, kk] (zero outside). */
function convRef(x: Host, w: Host, b: Host | null, o: ConvRefOpts = {}): Host {
  const sd = x.shape.length - 2;
  const s = o.stride ?? new Array(sd).fill(1), p = o.pad ?? new Array(sd).fill(0), d = o.dilation ?? new Array(sd).fill(1), g = o.groups ?? 1;
  const [n, , ...ins] = x.shape;
  const [oc, cg, ...ks] = w.shape;
  const outs = ins.map((len, i) => Math.floor((len + 2 * p[i] - d[i] * (ks[i] - 1) - 1) / s[i]) + 1);
  return build([n, oc, ...outs], (idx) => {
    const grp = Math.floor(idx[1] / (oc / g));
    let acc = b ? b.data[idx[1]] : 0;
    for (let c = 0; c < cg; c++) {
      build(ks, (kk) => {
        const pos = kk.map((k, i) => idx[2 + i] * s[i] + k * d[i] - p[i]);
        if (pos.every((q, i) => q >= 0 && q < ins[i])) acc += at(x, [idx[0], grp * cg + c, ...pos]) * at(w, [idx[1], c, ...kk]);
        return 0;
      });
    }
    return acc;
  });
}

/** Transposed conv by its scatter definition: y[n, o, i·s - p + k·d] += x[n, c, i] · w[c, o', k]. */
function convTransposeRef(x: Host, w: Host, b: Host | null, s: number[], p: number[], op: number[], d: number[], g: number): Host {
  const [n, c, h, wd] = x.shape;
  const [, og, kH, kW] = w.shape;
  const cg = c / g;
  const oH = (h - 1) * s[0] - 2 * p[0] + d[0] * (kH - 1) + op[0] + 1;
  const oW = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kW - 1) + op[1] + 1;
  const out = build([n, og * g, oH, oW], (idx) => (b ? b.data[idx[1]] : 0));
  for (let b0 = 0; b0 < n; b0++) for (let ci = 0; ci < c; ci++) for (let i = 0; i < h; i++) for (let j = 0; j < wd; j++) {
    const grp = Math.floor(ci / cg);
    for (let o = 0; o < og; o++) for (let ki = 0; ki < kH; ki++) for (let kj = 0; kj < kW; kj++) {
      const y = i * s[0] - p[0] + ki * d[0], xx = j * s[1] - p[1] + kj * d[1];
      if (y < 0 || y >= oH || xx < 0 || xx >= oW) continue;
      out.data[((b0 * og * g + grp * og + o) * oH + y) * oW + xx] += at(x, [b0, ci, i, j]) * at(w, [ci, o, ki, kj]);
    }
  }
  return out;
}

export function cnnCases(): GradcheckCase[] {
  return [
    {
      name: 'conv2d pad 1 with bias', op: 'conv2d', inputs: [sp([2, 2, 4, 5]), sp([3, 2, 3, 3], 'transposed'), sp([3])],
      fn: (x, w, b) => conv2d(x, w, b, { padding: 1 }), forward: (x, w, b) => convRef(x, w, b, { pad: [1, 1] }),
    },
    {
      name: 'conv2d stride 2, dilation 2, groups 2', op: 'conv2d', inputs: [sp([1, 4, 6, 7], 'flipped'), sp([4, 2, 2, 2])],
      fn: (x, w) => conv2d(x, w, null, { stride: [2, 1], dilation: [1, 2], groups: 2, padding: [1, 0] }),
      forward: (x, w) => convRef(x, w, null, { stride: [2, 1], dilation: [1, 2], groups: 2, pad: [1, 0] }),
    },
    {
      name: "conv2d padding 'same' even kernel, unbatched", op: 'conv2d', inputs: [sp([2, 4, 4]), sp([2, 2, 2, 2])],
      fn: (x, w) => conv2d(x, w, null, { padding: 'same' }),
      forward: (x, w) => {
        // 'same' with k = 2: zero row/col on the high side only.
        const xp = build([1, 2, 5, 5], (i) => (i[2] < 4 && i[3] < 4 ? at(x, [i[1], i[2], i[3]]) : 0));
        const r = convRef(xp, w, null);
        return { data: r.data, shape: r.shape.slice(1) };
      },
    },
    {
      name: 'conv1d stride 2 pad 1 with bias', op: 'conv1d', inputs: [sp([2, 3, 7], 'sliced'), sp([4, 3, 3]), sp([4])],
      fn: (x, w, b) => conv1d(x, w, b, { stride: 2, padding: 1 }), forward: (x, w, b) => convRef(x, w, b, { stride: [2], pad: [1] }),
    },
    {
      name: 'convTranspose2d stride 2, padding 1, outputPadding 1, bias', op: 'convTranspose2d', inputs: [sp([2, 3, 3, 2]), sp([3, 2, 3, 3]), sp([2])],
      fn: (x, w, b) => convTranspose2d(x, w, b, { stride: 2, padding: 1, outputPadding: 1 }),
      forward: (x, w, b) => convTransposeRef(x, w, b, [2, 2], [1, 1], [1, 1], [1, 1], 1),
    },
    {
      name: 'convTranspose2d groups 2, dilation 2', op: 'convTranspose2d', inputs: [sp([1, 4, 3, 3], 'transposed'), sp([4, 1, 2, 2])],
      fn: (x, w) => convTranspose2d(x, w, null, { groups: 2, dilation: 2, stride: [1, 2] }),
      forward: (x, w) => convTransposeRef(x, w, null, [1, 2], [0, 0], [0, 0], [2, 2], 2),
    },
  ];
}
