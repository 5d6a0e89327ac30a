import { ConvParams, DTypeError, E, Expr, NDArray, ShapeError, ValueError, convNd, scatterFlat } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { matmul } from './matmul';
import { batchify, checkOptions, inputGrad, tuple } from './conv';

/**
 * 2-d pooling. maxPool2d's forward is ONE elementwise kernel over kH·kW strided views of the
 * (padded) input, one per kernel tap, giving the max and the index of the first tap that
 * holds it; its backward routes the gradient to that tap with the contract's conv (the
 * data gradient of a conv whose weights are one-hot per tap). avgPool2d is a conv with a
 * constant kernel whose store divides by the window's count, so its backward is a conv too.
 */

export interface MaxPoolOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[];
  dilation?: number | readonly number[];
  ceilMode?: boolean;
}

export interface AvgPoolOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[];
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

/** PyTorch's pooling output size: the last window must start inside the input or the low padding. */
function poolOut(op: string, len: number, k: number, s: number, p: number, d: number, ceil: boolean): number {
  const span = len + 2 * p - d * (k - 1) - 1;
  if (span < 0) throw new ShapeError(`${op}: kernel ${k} (dilation ${d}) is larger than the padded input ${len} + 2·${p}`);
  let o = Math.floor((span + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (o - 1) * s >= len + p) o--;
  return o;
}

interface Geometry { k: number[]; s: number[]; p: number[]; d: number[]; out: number[] }

function geometry(op: string, x: Tensor, kernelSize: unknown, opts: { stride?: unknown; padding?: unknown; dilation?: unknown; ceilMode?: boolean }): Geometry {
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  const k = tuple(op, 'kernelSize', kernelSize, 2, 1);
  const s = opts.stride === undefined || opts.stride === null ? k.slice() : tuple(op, 'stride', opts.stride, 2, 1);
  const p = tuple(op, 'padding', opts.padding ?? 0, 2, 0);
  const d = tuple(op, 'dilation', opts.dilation ?? 1, 2, 1);
  if (p.some((q, i) => q > k[i] / 2)) throw new ValueError(`${op}: padding ${JSON.stringify(p)} should be at most half the kernel size ${JSON.stringify(k)}`);
  const xs = x.shape;
  const out = [0, 1].map((i) => poolOut(op, xs[xs.length - 2 + i], k[i], s[i], p[i], d[i], !!opts.ceilMode));
  return { k, s, p, d, out };
}

export function maxPool2d(x: Tensor, kernelSize: number | readonly number[], opts: MaxPoolOptions = {}): Tensor {
  const op = 'maxPool2d';
  checkTensor(op, x, 'the input');
  checkOptions(op, opts, ['stride', 'padding', 'dilation', 'ceilMode']);
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const g = geometry(op, xb, kernelSize, opts);
  return unbatch(maxPoolOp(xb, g));
}

function maxPoolOp(x: Tensor, g: Geometry): Tensor {
  const xn = x.nd('maxPool2d');
  const [n, c, h, w] = xn.shape;
  const [oH, oW] = g.out;
  // Tap t reads rows t·dilation + o·stride: a crop of out·stride rows from the stride
  // multiple at or below t·dilation, regrouped [out, stride], at phase t·dilation mod stride.
  // Starting the crop there (not at t·dilation) keeps it inside the input for windows that
  // tile it exactly, so the usual 2x2 pool needs no padded copy.
  const base = (t: number, i: number) => t * g.d[i] - ((t * g.d[i]) % g.s[i]);
  const need = [0, 1].map((i) => base(g.k[i] - 1, i) + g.out[i] * g.s[i]);
  const hi = [need[0] - h - g.p[0], need[1] - w - g.p[1]];
  let xp: NDArray;
  if (g.p[0] === 0 && g.p[1] === 0 && hi[0] <= 0 && hi[1] <= 0) {
    xp = xn.view.mask ? xn.contiguous() : alias(xn);
  } else {
    // One copy with -inf in the padding, so the taps below are plain (unmasked) views.
    const widths: [number, number][] = [[0, 0], [0, 0], [g.p[0], Math.max(hi[0], 0)], [g.p[1], Math.max(hi[1], 0)]];
    const padded = xn.pad(widths);
    const ones = NDArray.full(xn.backend, [1, 1, h, w], 1, 'bool');
    const mask = ones.pad(widths);
    [xp] = NDArray.elementwise([E.where(E.in(1), E.in(0), E.f(-Infinity))], [padded, mask], 'maxPool2d');
    padded.dispose(); ones.dispose(); mask.dispose();
  }
  const taps: NDArray[] = [];
  for (let i = 0; i < g.k[0]; i++) {
    for (let j = 0; j < g.k[1]; j++) {
      const [bi, bj] = [base(i, 0), base(j, 1)];
      const [fi, fj] = [i * g.d[0] - bi, j * g.d[1] - bj];
      const a = xp.crop([[0, n], [0, c], [bi, bi + oH * g.s[0]], [bj, bj + oW * g.s[1]]]);
      const b = a.reshape([n, c, oH, g.s[0], oW, g.s[1]]);
      const cc = b.crop([[0, n], [0, c], [0, oH], [fi, fi + 1], [0, oW], [fj, fj + 1]]);
      taps.push(cc.reshape([n, c, oH, oW]));
      a.dispose(); b.dispose(); cc.dispose();
    }
  }
  xp.dispose();
  let m: Expr = E.in(0);
  for (let t = 1; t < taps.length; t++) m = E.max(m, E.in(t));
  let idx: Expr = E.i(taps.length - 1);
  for (let t = taps.length - 2; t >= 0; t--) idx = E.where(E.eq(E.in(t), m), E.i(t), idx);
  const [out, arg] = NDArray.elementwise([m, idx], taps, 'maxPool2d');
  taps.forEach((t) => t.dispose());
  const K = g.k[0] * g.k[1];
  return fromOp('maxPool2d', out, [x], (gy) => {
    const tiled = g.k[0] === g.s[0] && g.k[1] === g.s[1] && g.d[0] === 1 && g.d[1] === 1;
    const gp = tiled ? tiledGrad(gy, arg, g) : overlappingGrad(gy, arg, g, need);
    // Back from the padded extent to the input: drop the padding, zero-fill a cropped tail.
    const ext = gp.shape.slice(2);
    const cr = gp.crop([[0, n], [0, c], [g.p[0], Math.min(ext[0], g.p[0] + h)], [g.p[1], Math.min(ext[1], g.p[1] + w)]]);
    gp.dispose();
    const padded = cr.pad([[0, 0], [0, 0], [0, h - cr.shape[2]], [0, w - cr.shape[3]]]);
    cr.dispose();
    const gx = padded.contiguous();
    padded.dispose();
    return [gx];
  }, [arg]);
}

/**
 * Windows that tile the input (stride = kernel, no dilation): each input element lies in one
 * window, so the gradient is a scatter of gy into zeros at each window's first max, whose flat
 * position is (n, c)'s plane + the window's corner + the tap's offset. One small elementwise
 * kernel over the output and one scatter: an elementwise kernel over the window grid
 * [N, C, oH, kH, oW, kW] instead ran rows of kW (= 2) elements, slow on the CPU.
 */
function tiledGrad(gy: NDArray, arg: NDArray, g: Geometry): NDArray {
  // On a GPU the grid kernel is one memory-bound dispatch (the scatter takes three and two
  // uploads): keep it there; the scatter is for the CPU, where short rows are what cost.
  if (gy.backend.name !== 'cpu') return gridGrad(gy, arg, g);
  const [n, c, oH, oW] = gy.shape;
  const [kH, kW] = g.k;
  const H = oH * kH, W = oW * kW;
  const backend = gy.backend;
  const plane = NDArray.fromData(backend, Int32Array.from({ length: n * c }, (_, i) => i * H * W), [n, c, 1, 1], 'int32');
  const corner = NDArray.fromData(backend, Int32Array.from({ length: oH * oW }, (_, q) => Math.floor(q / oW) * kH * W + (q % oW) * kW), [1, 1, oH, oW], 'int32');
  // The tap's offset in the plane, tap t = i·kW + j -> i·W + j (a where-chain: no integer division).
  let off: Expr = E.i((kH - 1) * W + kW - 1);
  for (let t = kH * kW - 2; t >= 0; t--) off = E.where(E.eq(E.in(0), E.i(t)), E.i(Math.floor(t / kW) * W + (t % kW)), off);
  const [pos] = NDArray.elementwise([E.add(E.add(E.in(1), E.in(2)), off)], [arg, plane, corner], 'maxPool2d backward');
  plane.dispose(); corner.dispose();
  const size = n * c * oH * oW;
  const idx = pos.reshape([size]);
  const src = gy.reshape([size]);
  const zero = NDArray.full(backend, [1, 1, 1, 1], 0);
  const base = zero.expand([n, c, H, W]);
  const r = scatterFlat('set', base, idx, src);
  pos.dispose(); idx.dispose(); src.dispose(); zero.dispose(); base.dispose();
  return r;
}

/** The tiling-window gradient as one elementwise kernel over the window grid [N, C, oH, kH, oW, kW]. */
function gridGrad(gy: NDArray, arg: NDArray, g: Geometry): NDArray {
  const [n, c, oH, oW] = gy.shape;
  const [kH, kW] = g.k;
  const grid = [n, c, oH, kH, oW, kW];
  const a = arg.reshape([n, c, oH, 1, oW, 1]);
  const gg = gy.reshape([n, c, oH, 1, oW, 1]);
  const tap = NDArray.fromData(gy.backend, Int32Array.from({ length: kH * kW }, (_, t) => t), [kH, 1, kW], 'int32');
  const [r] = NDArray.elementwise([E.where(E.eq(E.in(0), E.in(1)), E.in(2), E.f(0))], [a.expand(grid), tap, gg.expand(grid)], 'maxPool2d backward');
  a.dispose(); gg.dispose(); tap.dispose();
  const out = r.reshape([n, c, oH * kH, oW * kW]);
  r.dispose();
  return out;
}

/**
 * Overlapping windows: spread the gradient over taps, M[nc, t] = gy where tap t was the first
 * max, then scatter-add M back with the contract's conv (the data gradient of a conv whose
 * weights are one-hot per tap).
 */
function overlappingGrad(gy: NDArray, arg: NDArray, g: Geometry, need: number[]): NDArray {
  const [n, c, oH, oW] = gy.shape;
  const K = g.k[0] * g.k[1];
  const ids = NDArray.fromData(gy.backend, Int32Array.from({ length: K }, (_, t) => t), [1, K, 1, 1], 'int32');
  const a = arg.reshape([n * c, 1, oH, oW]);
  const gg = gy.reshape([n * c, 1, oH, oW]);
  const [mt] = NDArray.elementwise([E.where(E.eq(E.in(0), E.in(1)), E.in(2), E.f(0))], [a, ids, gg], 'maxPool2d backward');
  a.dispose(); gg.dispose(); ids.dispose();
  const oneHot = NDArray.fromData(gy.backend, Float32Array.from({ length: K * K }, (_, q) => (Math.floor(q / K) === q % K ? 1 : 0)), [K, 1, g.k[0], g.k[1]]);
  const p: ConvParams = { stride: g.s, padding: [[0, 0], [0, 0]], dilation: g.d, lhsDilation: [1, 1], groups: 1 };
  const gp = inputGrad(mt, oneHot, [n * c, 1, need[0], need[1]], [K, 1, g.k[0], g.k[1]], [n * c, K, oH, oW], p);
  mt.dispose(); oneHot.dispose();
  const r = gp.reshape([n, c, need[0], need[1]]);
  gp.dispose();
  return r;
}

export function avgPool2d(x: Tensor, kernelSize: number | readonly number[], opts: AvgPoolOptions = {}): Tensor {
  const op = 'avgPool2d';
  checkTensor(op, x, 'the input');
  checkOptions(op, opts, ['stride', 'padding', 'ceilMode', 'countIncludePad']);
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const g = geometry(op, xb, kernelSize, opts);
  const includePad = opts.countIncludePad ?? true;
  const [n, c, h, w] = xb.shape;
  const [oH, oW] = g.out;
  // 1 / (the window's count), as PyTorch: windows clipped to the padded input, and to the input too without countIncludePad.
  const inv = new Float32Array(oH * oW);
  for (let i = 0; i < oH; i++) {
    for (let j = 0; j < oW; j++) {
      const cnt = [[i, h, 0], [j, w, 1]].map(([o, len, d]) => {
        let st = o * g.s[d] - g.p[d];
        let en = Math.min(st + g.k[d], len + g.p[d]);
        const full = en - st;
        st = Math.max(st, 0);
        en = Math.min(en, len);
        return includePad ? full : en - st;
      });
      inv[i * oW + j] = 1 / (cnt[0] * cnt[1]);
    }
  }
  const xn = xb.nd(op);
  const backend = xn.backend;
  const xr = xn.reshape([n * c, 1, h, w]);
  const ones = NDArray.full(backend, [1, 1, g.k[0], g.k[1]], 1);
  const div = NDArray.fromData(backend, inv, [1, 1, oH, oW]);
  const pad = [0, 1].map((d) => [g.p[d], (g.out[d] - 1) * g.s[d] + g.k[d] - [h, w][d] - g.p[d]] as [number, number]);
  const p: ConvParams = { stride: g.s, padding: pad, dilation: [1, 1], lhsDilation: [1, 1], groups: 1 };
  const y = convNd(xr, ones, p, { expr: E.mul(E.in(0), E.in(1)), inputs: [div] }, op);
  xr.dispose();
  const out = y.reshape([n, c, oH, oW]);
  y.dispose();
  const res = fromOp(op, out, [xb], (gy) => {
    const gg = gy.reshape([n * c, 1, oH, oW]);
    const scaled = gg.map(E.mul(E.in(0), E.in(1)), div);
    gg.dispose();
    const gx = inputGrad(scaled, ones, [n * c, 1, h, w], [1, 1, g.k[0], g.k[1]], [n * c, 1, oH, oW], p);
    scaled.dispose();
    const r = gx.reshape([n, c, h, w]);
    gx.dispose();
    return [r];
  }, [ones, div]);
  return unbatch(res);
}

/**
 * PyTorch's adaptive average pool: output cell i averages input rows floor(i·H/oH) to
 * ceil((i+1)·H/oH). Separable, so it is two matmuls with host-built averaging matrices
 * (P_h · x · P_wᵀ), and matmul's backward gives the gradient.
 */
export function adaptiveAvgPool2d(x: Tensor, outputSize: number | readonly (number | null)[]): Tensor {
  const op = 'adaptiveAvgPool2d';
  checkTensor(op, x, 'the input');
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const [h, w] = xb.shape.slice(2);
  const raw = typeof outputSize === 'number' ? [outputSize, outputSize] : Array.isArray(outputSize) && outputSize.length === 2 ? outputSize.map((v, i) => (v === null ? [h, w][i] : v)) : null;
  if (!raw || !raw.every((v) => Number.isInteger(v) && (v as number) >= 1)) throw new ValueError(`${op}: outputSize ${JSON.stringify(outputSize)}; expected a positive integer or a pair (null keeps that dim)`);
  const [oH, oW] = raw as number[];
  const avg = (o: number, len: number, transpose: boolean): Tensor => {
    const m = new Float32Array(o * len);
    for (let i = 0; i < o; i++) {
      const st = Math.floor((i * len) / o), en = Math.ceil(((i + 1) * len) / o);
      for (let j = st; j < en; j++) m[transpose ? j * o + i : i * len + j] = 1 / (en - st);
    }
    return new Tensor(NDArray.fromData(xb.nd(op).backend, m, transpose ? [len, o] : [o, len]));
  };
  const ph = avg(oH, h, false), pw = avg(oW, w, true);
  const t = matmul(ph, xb);
  const y = matmul(t, pw);
  t.dispose(); ph.dispose(); pw.dispose();
  return unbatch(y);
}
