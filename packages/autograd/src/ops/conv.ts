import {
  BackendError,
  ConvParams,
  DTypeError,
  NDArray,
  ShapeError,
  ValueError,
  checkConvArgs,
  convNd,
  fmtShape,
  numel,
  parseOptions,
} from '@surf/core';
import { alias, fromOp } from '../node';
import { EpilogueKernel, PendingResult } from '../fusion/pending';
import { Tensor, checkTensor } from '../tensor';

/**
 * conv1d, conv2d and convTranspose2d, all over ONE differentiable op on the contract's
 * general conv (core/src/conv.ts). Its gradients are that same conv again:
 * - input gradient: the output gradient, lhs-dilated by the stride, convolved with the
 *   flipped, per-group transposed weight (stride = the forward's lhs dilation);
 * - weight gradient: the input with batch and channels swapped, convolved with the output
 *   gradient as kernel (dilated by the stride, strided by the dilation).
 * convTranspose2d is the input-gradient form written forward, so its backward comes for free.
 */

/**
 * The general conv with an optional bias [O]. The conv is a pending result (fusion/pending.ts),
 * as a matmul is: the bias is the public add, which the fusion pass (fusion/fold.ts) folds into
 * the conv's epilogue, and so does an activation after it (`conv2d(x, w, b).relu()` is one
 * kernel), the same mechanism as linear's bias and ReLU.
 */
export function convGeneral(x: Tensor, w: Tensor, b: Tensor | null, p: ConvParams, op = 'conv'): Tensor {
  const xn = x.nd(op),
    wn = w.nd(op),
    bn = b ? b.nd(op) : null;
  const sd = xn.ndim - 2;
  if (bn) {
    if (bn.dtype !== 'float32') throw new DTypeError(`${op}: bias has dtype ${bn.dtype}; expected float32`);
    if (bn.ndim !== 1 || bn.shape[0] !== wn.shape[0])
      throw new ShapeError(
        `${op}: bias has shape ${fmtShape(bn.shape)}; expected [${wn.shape[0]}] (one per output channel)`,
      );
    if (bn.backend !== xn.backend)
      throw new BackendError(`${op}: the input lives on backend ${xn.backend.name}, the bias on ${bn.backend.name}`);
  }
  const y = convProduct(x, w, xn, wn, p, op);
  if (!b) return y;
  // Intermediates are folded into their consumer and never read: free them now.
  const bview = b.reshape([bn!.shape[0], ...new Array<number>(sd).fill(1)]);
  const out = y.add(bview);
  y.dispose();
  bview.dispose();
  return out;
}

/** The conv itself as one pending node; checked now, computed when read or folded into. */
function convProduct(x: Tensor, w: Tensor, xn: NDArray, wn: NDArray, p: ConvParams, op: string): Tensor {
  if (xn.backend !== wn.backend)
    throw new BackendError(
      `${op}: input and weight live on different backends (${xn.backend.name} and ${wn.backend.name})`,
    );
  const shape = checkConvArgs(xn, wn, p, op);
  xn.backend.checkOutput?.(op, 'float32', numel(shape));
  const kernel: EpilogueKernel = ([xk, wk], epilogue) => convNd(xk, wk, p, epilogue, op);
  const pending = new PendingResult(kernel, [alias(xn), alias(wn)], null, [], shape, shape);
  const xs = xn.shape.slice(),
    ws = wn.shape.slice(),
    os = shape.slice();
  const xa = alias(xn),
    wa = alias(wn);
  return fromOp(
    op,
    pending,
    [x, w],
    (g) => [
      x.requiresGrad ? inputGrad(g, wa, xs, ws, os, p) : null,
      w.requiresGrad ? weightGrad(g, xa, xs, ws, os, p) : null,
    ],
    [xa, wa],
  );
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** [O, Cg, ...k] -> [C, Og, ...k] (per group: swap in/out channels), spatially flipped. */
export function flipTransposeWeight(w: NDArray, groups: number): NDArray {
  const [o, cg, ...k] = w.shape;
  const og = o / groups;
  const sd = k.length;
  const a = w.reshape([groups, og, cg, ...k]);
  const b = a.permute([0, 2, 1, ...range(sd).map((i) => i + 3)]);
  const c = b.reshape([groups * cg, og, ...k]);
  const d = c.flip(range(sd).map((i) => i + 2));
  a.dispose();
  b.dispose();
  c.dispose();
  return d;
}

function inputGrad(g: NDArray, w: NDArray, xs: number[], ws: number[], os: number[], p: ConvParams): NDArray {
  const sd = xs.length - 2;
  const wt = flipTransposeWeight(w, p.groups);
  const padding = range(sd).map((d) => {
    const k = ws[2 + d],
      dil = p.dilation[d];
    const lo = dil * (k - 1) - p.padding[d][0];
    const dOut = (os[2 + d] - 1) * p.stride[d] + 1;
    const hi = (xs[2 + d] - 1) * p.lhsDilation[d] + 1 + dil * (k - 1) - dOut - lo;
    return [lo, hi] as [number, number];
  });
  try {
    return convNd(g, wt, {
      stride: p.lhsDilation,
      padding,
      dilation: p.dilation,
      lhsDilation: p.stride,
      groups: p.groups,
    });
  } finally {
    wt.dispose();
  }
}

function weightGrad(g: NDArray, x: NDArray, xs: number[], ws: number[], os: number[], p: ConvParams): NDArray {
  const sd = xs.length - 2;
  const [n, c] = xs;
  const G = p.groups,
    cg = c / G;
  const sp = range(sd).map((i) => i + 3);
  // x [N, C, ...] -> [Cg, G*N, ...]: batch becomes the within-group channel.
  const x5 = x.reshape([n, G, cg, ...xs.slice(2)]);
  const xp = x5.permute([2, 1, 0, ...sp]);
  const xt = xp.reshape([cg, G * n, ...xs.slice(2)]);
  const gt = g.permute([1, 0, ...range(sd).map((i) => i + 2)]); // [O, N, ...out]
  const padding = range(sd).map((d) => {
    const lo = p.padding[d][0];
    const dIn = (xs[2 + d] - 1) * p.lhsDilation[d] + 1;
    const hi = (ws[2 + d] - 1) * p.dilation[d] + p.stride[d] * (os[2 + d] - 1) + 1 - dIn - lo;
    return [lo, hi] as [number, number];
  });
  try {
    const r = convNd(xt, gt, {
      stride: p.dilation,
      padding,
      dilation: p.stride,
      lhsDilation: p.lhsDilation,
      groups: G,
    }); // [Cg, O, ...k]
    const out = r.permute([1, 0, ...range(sd).map((i) => i + 2)]);
    r.dispose();
    return out;
  } finally {
    x5.dispose();
    xp.dispose();
    xt.dispose();
    gt.dispose();
  }
}

// PyTorch-style front ends

export interface ConvOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[] | 'same' | 'valid';
  dilation?: number | readonly number[];
  groups?: number;
}

export interface ConvTransposeOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[];
  outputPadding?: number | readonly number[];
  dilation?: number | readonly number[];
  groups?: number;
}

/** A number or a tuple of `n` integers >= min, as a tuple. */
export function tuple(op: string, name: string, v: unknown, n: number, min: number): number[] {
  const arr = typeof v === 'number' ? new Array<number>(n).fill(v) : Array.isArray(v) ? v.slice() : null;
  if (!arr || arr.length !== n || !arr.every((a) => Number.isInteger(a) && a >= min)) {
    throw new ValueError(`${op}: ${name} ${JSON.stringify(v)}; expected an integer >= ${min} or ${n} of them`);
  }
  return arr;
}

/** Sizes (stride, padding, ...) are numbers or tuples; `tuple` checks their values with the geometry. */
export const SIZE_RULE = 'any';

/** Adds the batch dim to an unbatched input; returns the input and how to undo it. */
export function batchify(op: string, x: Tensor, sd: number, layout: string): [Tensor, (y: Tensor) => Tensor] {
  if (x.ndim === sd + 2) return [x, (y) => y];
  if (x.ndim === sd + 1) return [x.unsqueeze(0), (y) => y.squeeze(0)];
  throw new ShapeError(`${op}: input has shape ${fmtShape(x.shape)}; expected ${layout} or unbatched without N`);
}

function convNdFront(op: string, sd: number, x: Tensor, w: Tensor, b: Tensor | null, opts: ConvOptions): Tensor {
  checkTensor(op, x, 'the input');
  checkTensor(op, w, 'the weight');
  if (b !== null && b !== undefined) checkTensor(op, b, 'the bias');
  parseOptions(op, opts, { stride: SIZE_RULE, padding: SIZE_RULE, dilation: SIZE_RULE, groups: 'posint' });
  const layout = sd === 1 ? '[N, C, L]' : '[N, C, H, W]';
  if (w.ndim !== sd + 2)
    throw new ShapeError(
      `${op}: weight has shape ${fmtShape(w.shape)}; expected ${sd === 1 ? '[O, C/groups, k]' : '[O, C/groups, kH, kW]'}`,
    );
  const stride = tuple(op, 'stride', opts.stride ?? 1, sd, 1);
  const dilation = tuple(op, 'dilation', opts.dilation ?? 1, sd, 1);
  const groups = opts.groups ?? 1;
  if (!Number.isInteger(groups) || groups < 1)
    throw new ValueError(`${op}: groups ${JSON.stringify(groups)}; expected a positive integer`);
  const k = w.shape.slice(2);
  let padding: [number, number][];
  const pv = opts.padding ?? 0;
  if (pv === 'valid') padding = k.map(() => [0, 0]);
  else if (pv === 'same') {
    if (stride.some((s) => s !== 1))
      throw new ValueError(`${op}: padding 'same' needs stride 1; got stride ${JSON.stringify(opts.stride)}`);
    // As PyTorch: the odd extra row/column of padding goes on the high side.
    padding = k.map((kk, d) => {
      const t = dilation[d] * (kk - 1);
      return [Math.floor(t / 2), t - Math.floor(t / 2)];
    });
  } else padding = tuple(op, 'padding', pv, sd, 0).map((q) => [q, q]);
  const [xb, unbatch] = batchify(op, x, sd, layout);
  return unbatch(
    convGeneral(
      xb,
      w,
      b ?? null,
      { stride, padding, dilation, lhsDilation: new Array<number>(sd).fill(1), groups },
      op,
    ),
  );
}

/** torch.nn.functional.conv1d: input [N, C, L] or [C, L], weight [O, C/groups, k]. */
export function conv1d(x: Tensor, w: Tensor, b: Tensor | null = null, opts: ConvOptions = {}): Tensor {
  return convNdFront('conv1d', 1, x, w, b, opts);
}

/** torch.nn.functional.conv2d: input [N, C, H, W] or [C, H, W], weight [O, C/groups, kH, kW]. */
export function conv2d(x: Tensor, w: Tensor, b: Tensor | null = null, opts: ConvOptions = {}): Tensor {
  return convNdFront('conv2d', 2, x, w, b, opts);
}

/**
 * torch.nn.functional.conv_transpose2d: input [N, C, H, W], weight [C, O/groups, kH, kW];
 * out = (in - 1)·stride - 2·padding + dilation·(k - 1) + outputPadding + 1. Computed as the
 * conv of the stride-dilated input with the flipped, transposed weight.
 */
export function convTranspose2d(
  x: Tensor,
  w: Tensor,
  b: Tensor | null = null,
  opts: ConvTransposeOptions = {},
): Tensor {
  const op = 'convTranspose2d';
  checkTensor(op, x, 'the input');
  checkTensor(op, w, 'the weight');
  if (b !== null && b !== undefined) checkTensor(op, b, 'the bias');
  parseOptions(op, opts, {
    stride: SIZE_RULE,
    padding: SIZE_RULE,
    outputPadding: SIZE_RULE,
    dilation: SIZE_RULE,
    groups: 'posint',
  });
  const stride = tuple(op, 'stride', opts.stride ?? 1, 2, 1);
  const padding = tuple(op, 'padding', opts.padding ?? 0, 2, 0);
  const outputPadding = tuple(op, 'outputPadding', opts.outputPadding ?? 0, 2, 0);
  const dilation = tuple(op, 'dilation', opts.dilation ?? 1, 2, 1);
  const groups = opts.groups ?? 1;
  if (!Number.isInteger(groups) || groups < 1)
    throw new ValueError(`${op}: groups ${JSON.stringify(groups)}; expected a positive integer`);
  if (outputPadding.some((q, d) => q >= stride[d] && q >= dilation[d]))
    throw new ValueError(
      `${op}: outputPadding ${JSON.stringify(outputPadding)} must be smaller than stride ${JSON.stringify(stride)} or dilation ${JSON.stringify(dilation)}`,
    );
  if (w.ndim !== 4)
    throw new ShapeError(`${op}: weight has shape ${fmtShape(w.shape)}; expected [C, O/groups, kH, kW]`);
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  if (xb.shape[1] !== w.shape[0])
    throw new ShapeError(
      `${op}: input ${fmtShape(x.shape)} has ${xb.shape[1]} channels but weight ${fmtShape(w.shape)} expects ${w.shape[0]} (weight is [C, O/groups, kH, kW])`,
    );
  if (w.shape[0] % groups !== 0)
    throw new ShapeError(`${op}: input channels ${w.shape[0]} do not divide by groups ${groups}`);
  const [c, og, kH, kW] = w.shape;
  const cg = c / groups;
  // [C, Og, k] -> [O, Cg, k] per group, flipped: differentiable views, so w's gradient flows.
  const wt = w
    .reshape([groups, cg, og, kH, kW])
    .permute([0, 2, 1, 3, 4])
    .reshape([groups * og, cg, kH, kW])
    .flip([2, 3]);
  const pad = [kH, kW].map((k, d) => {
    const t = dilation[d] * (k - 1) - padding[d];
    return [t, t + outputPadding[d]] as [number, number];
  });
  return unbatch(
    convGeneral(xb, wt, b ?? null, { stride: [1, 1], padding: pad, dilation, lhsDilation: stride, groups }, op),
  );
}
