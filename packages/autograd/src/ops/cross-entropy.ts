import {
  DTypeError,
  E,
  Expr,
  NDArray,
  ShapeError,
  SurfTypeError,
  ValueError,
  fmtShape,
  parseOptions,
  shapesEqual,
} from '@surf/core';
import { alias, fromOp } from '../node';
import { readSync } from '../move';
import { tidy } from '../scope';
import { Tensor, checkTensor } from '../tensor';
import { indexSelect } from './index-select';

/**
 * Softmax cross entropy of [N, C] logits against int32 class indices [N], as ONE op with a
 * hand-written backward. With w the smoothed target ((1 − ε)·onehot + ε/C), m the row max
 * and s = Σ exp(z − m):
 *   loss_i = k_i·Σ_j w_ij·(log s_i + m_i − z_ij)
 *   dloss_i/dz_ij = k_i·(W_i·e_ij/s_i − w_ij),  W_i = Σ_j w_ij,
 * with k_i = 0 for a row whose target is the ignoreIndex (1 otherwise). The forward is the
 * backend's rows op (Backend.crossEntropyRows: max, exp-sum and the terms in one kernel, and
 * the mean too, divided by the kept rows' count that the op counts from the targets; on
 * WebGPU the sum as well); the backward is one kernel recomputing exp(z − m): no logSoftmax
 * graph, no one-hot tensor, no mean op (the count is a [1, 1] input of the kernel). An index outside
 * [0, C) that is not the ignoreIndex is an error, never a silent 0: on the CPU backend the
 * indices are checked on the host at once; on a GPU a device-side assert inside the rows
 * kernel sets the backend's error flag, and the next readback of any tensor or sync() raises
 * the ValueError naming the index, as CUDA's device asserts; such rows are NaN too.
 * Class weights take a composed form (weightedCrossEntropy below).
 */
export type CrossEntropyReduction = 'mean' | 'sum' | 'none';

// The column index j of the one-hot comparison: a host array per class count, uploaded per
// call (C int32s, no kernel), because a device-side cache would outlive every tensor and
// break the exact buffer accounting that memory() promises.
const iotas = new Map<number, Int32Array>();
function iota(c: number): Int32Array {
  let a = iotas.get(c);
  if (!a) {
    a = Int32Array.from({ length: c }, (_, i) => i);
    if (iotas.size < 64) iotas.set(c, a);
  }
  return a;
}

// A max of ±Infinity (a row of -Infinity) would make z - m NaN; shift by 0 instead.
const finiteOr0 = (m: Expr): Expr => E.where(E.eq(E.sub(m, m), E.f(0)), m, E.f(0));

interface CeExprs {
  /** The rows op's backward, d loss / d z with the seed 1: over (g unread), z, m, s, y, cols (, 1/D). */
  rowsGrad: Expr;
  /** The same times the incoming gradient, input 0. */
  rowsGradOfG: Expr;
}

// One set of expressions per (classes, smoothing, scale): the same objects every step, so the
// backends' per-Expr caches hit instead of walking fresh trees (no jit-dynamic values inside).
const ceCache = new Map<string, CeExprs>();

/**
 * `ignore`: rows whose target equals it get no gradient. `invD`: the gradient is also divided by
 * an input [1, 1] holding D (a mean over the kept rows whose count lives on the device), the
 * last input of the backward expressions.
 */
function ceExprs(c: number, eps: number, scale: number, ignore: number | null = null, invD = false): CeExprs {
  const key = `${c}|${eps}|${scale}|${ignore}|${invD}`;
  let x = ceCache.get(key);
  if (x) return x;
  // Inputs of the weight expression: in(yIdx) the targets [N, 1], in(yIdx + 1) the columns [1, C].
  const hitAt = (yIdx: number): Expr => E.eq(E.in(yIdx), E.in(yIdx + 1));
  const weight = (yIdx: number): Expr =>
    eps === 0 ? E.cast(hitAt(yIdx), 'float32') : E.where(hitAt(yIdx), E.f(1 - eps + eps / c), E.f(eps / c));
  const valid = (yIdx: number): Expr =>
    E.where(E.lt(E.in(yIdx), E.i(0)), E.f(0), E.where(E.lt(E.in(yIdx), E.i(c)), E.f(1), E.f(0)));
  const rowW = (yIdx: number): Expr => (eps === 0 ? valid(yIdx) : E.add(E.mul(valid(yIdx), E.f(1 - eps)), E.f(eps)));
  // d loss / d z = scale·(W_i·e/s − w), with e, s and the targets at the given inputs.
  const gradOf = (e: Expr, s: Expr, yIdx: number): Expr => {
    let f: Expr = E.f(scale);
    if (invD) f = E.div(f, E.in(yIdx + 2));
    if (ignore !== null) f = E.where(E.eq(E.in(yIdx), E.i(ignore)), E.f(0), f);
    return E.mul(f, E.sub(E.div(E.mul(rowW(yIdx), e), s), weight(yIdx)));
  };
  const exp = (z: Expr, m: Expr): Expr => E.exp(E.sub(z, finiteOr0(m)));
  const rowsGrad = gradOf(exp(E.in(1), E.in(2)), E.in(3), 4);
  x = { rowsGrad, rowsGradOfG: E.mul(E.in(0), rowsGrad) };
  if (ceCache.size >= 64) ceCache.clear();
  ceCache.set(key, x);
  return x;
}

export interface SoftmaxCrossEntropyOptions {
  labelSmoothing?: number;
  reduction?: CrossEntropyReduction;
  /** Rows whose target equals it add nothing and leave the mean's denominator (default -100, PyTorch's). */
  ignoreIndex?: number;
  /** Per-class weights, a float32 tensor of C; the mean divides by the sum of the kept targets' weights. */
  weight?: Tensor | null;
}

/**
 * Softmax cross entropy as PyTorch's F.cross_entropy with class indices: input [N, C] or
 * [N, C, d1, ...] (or unbatched [C]), target int32 [N] / [N, d1, ...] / []. Without class
 * weights it is the fused rows op (one kernel on both of Surf's backends; an ignored target is
 * handled inside it); with weights it is composed from logSoftmax and gathers.
 */
export function softmaxCrossEntropy(logits: Tensor, target: Tensor, opts: SoftmaxCrossEntropyOptions = {}): Tensor {
  const op = 'crossEntropy';
  checkTensor(op, logits, 'input');
  checkTensor(op, target, 'target');
  const o = parseOptions<SoftmaxCrossEntropyOptions>(op, opts, {
    labelSmoothing: (v, w) => {
      if (typeof v !== 'number' || !(v >= 0 && v <= 1))
        throw new ValueError(`${w}: labelSmoothing must be in [0, 1]; got ${JSON.stringify(v)}`);
    },
    reduction: ['mean', 'sum', 'none'],
    ignoreIndex: 'int',
    weight: (v, w) => {
      if (v !== null && !(v instanceof Tensor))
        throw new SurfTypeError(`${w}: weight must be a float32 Tensor of one weight per class; got ${typeof v}`);
    },
  });
  const eps = o.labelSmoothing ?? 0;
  const reduction = o.reduction ?? 'mean';
  const ignore = o.ignoreIndex ?? -100;
  const weight = o.weight ?? null;
  const zs = logits.shape;
  if (target.dtype !== 'int32')
    throw new DTypeError(`${op}: target has dtype ${target.dtype}; expected int32 class indices`);
  if (zs.length === 0)
    throw new ShapeError(`${op}: input is 0-d; expected [classes], [batch, classes] or [batch, classes, d1, ...]`);
  const c = zs.length === 1 ? zs[0] : zs[1];
  const wantY = zs.length === 1 ? [] : [zs[0], ...zs.slice(2)];
  if (!shapesEqual(target.shape, wantY))
    throw new ShapeError(
      `${op}: target has shape ${fmtShape(target.shape)}; expected ${fmtShape(wantY)} (one class index per ${zs.length > 2 ? 'position' : 'row'} of the input ${fmtShape(zs)})`,
    );
  if (weight) {
    if (weight.dtype !== 'float32') throw new DTypeError(`${op}: weight has dtype ${weight.dtype}; expected float32`);
    if (weight.ndim !== 1 || weight.shape[0] !== c)
      throw new ShapeError(`${op}: weight has shape ${fmtShape(weight.shape)}; expected [${c}] (one weight per class)`);
  }
  if (zs.length === 2) return crossEntropy2d(logits, target, { eps, reduction, ignore, weight });
  // [C] and [N, C, d...]: the class dim moves last and the rest flattens into rows.
  return tidy(() => {
    const z2 =
      zs.length === 1
        ? logits.reshape([1, c])
        : logits.permute([0, ...zs.slice(2).map((_, i) => i + 2), 1]).reshape([-1, c]);
    const r = crossEntropy2d(z2, target.reshape([-1]), { eps, reduction, ignore, weight });
    return reduction === 'none' ? r.reshape(wantY) : r;
  });
}

interface Ce2dOptions {
  eps: number;
  reduction: CrossEntropyReduction;
  ignore: number;
  weight: Tensor | null;
}

function crossEntropy2d(logits: Tensor, target: Tensor, o: Ce2dOptions): Tensor {
  const op = 'crossEntropy';
  const { eps, reduction, ignore } = o;
  const zn0 = logits.nd(op);
  const yn = target.nd(op);
  const [n, c] = zn0.shape;
  const hostY = readSync(yn, false);
  const b = zn0.backend;
  const site = { op, name: 'target', range: `the class range [0, ${c}) of the input's ${c} columns` };
  if (hostY) checkClassIndices(op, hostY, c, ignore);
  // The mean of no rows is NaN, as in PyTorch (and the gradient of nothing is empty).
  if (n === 0 && reduction === 'mean')
    return fromOp(op, NDArray.full(zn0.backend, [], NaN), [logits], () => [NDArray.full(zn0.backend, zn0.shape, 0)]);
  if (o.weight || !b.crossEntropyRows) return weightedCrossEntropy(logits, target, o, c, !!hostY);
  const zn = zn0.dtype === 'float32' ? zn0 : zn0.cast('float32');
  // A mean divides by the kept rows' count inside the backend's op, from the targets that call
  // reads: never a host-read constant, which a jit replay with other targets would keep. (With
  // no row kept the count 0 divides too: a NaN loss and zero gradients, as PyTorch.)
  const deviceMean = reduction === 'mean';
  const scale = 1;
  const y2 = yn.reshape([n, 1]);
  const cols = NDArray.fromData(zn.backend, iota(c), [1, c], 'int32');
  return fusedRows(op, logits, zn, zn0, yn, y2, cols, { c, eps, scale, reduction, site, ignore, deviceMean });
}

/** The forward as the backend's one-pass rows (Backend.crossEntropyRows) and a sum; the index check rides in it. */
function fusedRows(
  op: string,
  logits: Tensor,
  zn: NDArray,
  zn0: NDArray,
  yn: NDArray,
  y2: NDArray,
  cols: NDArray,
  o: {
    c: number;
    eps: number;
    scale: number;
    reduction: CrossEntropyReduction;
    site: { op: string; name: string; range: string };
    ignore: number;
    /** A mean whose kept-row count is on the device: the rows kernel divides its total by it. */
    deviceMean: boolean;
  },
): Tensor {
  const n = zn.shape[0];
  const plainY = yn.view.mask ? yn.contiguous() : yn;
  // A backend that can sums the rows in the same pass (one dispatch fewer per step).
  const [ms, ss, rs, ts] = zn.backend.crossEntropyRows!(zn.strided, plainY.strided, {
    smoothing: o.eps,
    scale: o.scale,
    site: o.site,
    total: o.reduction !== 'none',
    ignoreIndex: o.ignore,
    meanOverKept: o.deviceMean,
  });
  if (plainY !== yn) plainY.dispose();
  const m = NDArray.fromStorage(ms, [n, 1]);
  let s: NDArray;
  let keptN: NDArray | null = null;
  if (ts && o.deviceMean) {
    // The kernel wrote the kept count after the n row sums: the backward's divisor, no recount.
    const all = NDArray.fromStorage(ss, [n + 1, 1]);
    s = all.crop([
      [0, n],
      [0, 1],
    ]);
    keptN = all.crop([
      [n, n + 1],
      [0, 1],
    ]);
    all.dispose();
  } else s = NDArray.fromStorage(ss, [n, 1]);
  const rows = NDArray.fromStorage(rs, [n]);
  // 1/D for a device-side mean: computed once, by the forward when the kernel gave no total.
  const keptCount = (): NDArray => (keptN ??= countKeptOnDevice(y2, o.ignore, op));
  let out: NDArray;
  if (o.reduction === 'none') out = rows;
  else if (ts) out = NDArray.fromStorage(ts, []);
  else if (o.deviceMean) {
    const total = rows.sum([0], true).reshape([1, 1]);
    const [q] = NDArray.elementwise([E.div(E.in(0), E.in(1))], [total, keptCount()], op);
    total.dispose();
    out = q.reshape([]);
    q.dispose();
  } else out = rows.sum();
  if (out !== rows) rows.dispose();
  // The backward reads the logits again: keep a reference (a float32 copy when they were cast).
  const z = zn === zn0 ? alias(zn) : zn;
  const x = ceExprs(o.c, o.eps, o.scale, o.ignore, o.deviceMean);
  const extra = (): NDArray[] => (o.deviceMean ? [keptCount()] : []);
  return fromOp(
    op,
    out,
    [logits],
    (g) => {
      const gk = o.reduction === 'none' ? g.reshape([n, 1]) : alias(g);
      const [gz] = NDArray.elementwise([x.rowsGradOfG], [gk, z, m, s, y2, cols, ...extra()], `${op} backward`);
      gk.dispose();
      return [gz];
    },
    [z, m, s, y2, cols, { dispose: () => keptN?.dispose() }],
    () => {
      const [gz] = NDArray.elementwise([x.rowsGrad], [z, z, m, s, y2, cols, ...extra()], `${op} backward`);
      return [gz];
    },
  );
}

/** The number of rows whose target is not `ignore`, [1, 1] on the device (a mean over none is NaN, as PyTorch). */
function countKeptOnDevice(y2: NDArray, ignore: number, op: string): NDArray {
  const [k] = NDArray.elementwise([E.where(E.eq(E.in(0), E.i(ignore)), E.f(0), E.f(1))], [y2], op);
  const cnt = k.sum([0], true);
  k.dispose();
  return cnt;
}

/**
 * With class weights (or no kept row, or a backend without the rows op): PyTorch's formula
 * from differentiable ops. With w_y the weight of row i's target, k_i = 0 for an ignored row:
 *   loss_i = k_i·((1 − ε)·w_y·(−log p_iy) + (ε/C)·Σ_j w_j·(−log p_ij)),
 * and the mean divides by Σ_i k_i·w_y.
 */
function weightedCrossEntropy(logits: Tensor, target: Tensor, o: Ce2dOptions, c: number, checked: boolean): Tensor {
  const op = 'crossEntropy';
  return tidy(() => {
    const keep = target.ne(o.ignore);
    const safe = Tensor.where(keep, target, 0);
    if (!checked)
      deviceCheckClassIndices(op, safe.nd(op), c, {
        op,
        name: 'target',
        range: `the class range [0, ${c}) of the input's ${c} columns`,
      });
    const logp = (logits.dtype === 'float32' ? logits : logits.float()).logSoftmax(1);
    const k = keep.float();
    const wy = o.weight ? indexSelect(o.weight, 0, safe).mul(k) : k;
    let loss = logp
      .gather(1, safe.reshape([-1, 1]))
      .reshape([-1])
      .neg()
      .mul(wy);
    if (o.eps > 0) {
      const all = (o.weight ? logp.mul(o.weight.reshape([1, c])) : logp).sum(1).neg().mul(k);
      loss = loss.mul(1 - o.eps).add(all.mul(o.eps / c));
    }
    if (o.reduction === 'none') return loss;
    if (o.reduction === 'sum') return loss.sum();
    return meanOverWeights(loss, wy);
  });
}

/**
 * Σ loss / Σ w as PyTorch: with nothing kept (Σ w = 0) the loss is NaN and the gradient 0 (a
 * plain division would send 0·∞ = NaN back).
 */
function meanOverWeights(loss: Tensor, w: Tensor): Tensor {
  const d = w.sum();
  const none = d.eq(0);
  return Tensor.where(none, NaN, loss.sum().div(Tensor.where(none, 1, d)));
}

/** Queues the device-side check of the indices (a backend that cannot read them at once has one). */
function deviceCheckClassIndices(
  op: string,
  y: NDArray,
  c: number,
  site: { op: string; name: string; range: string },
): void {
  const b = y.backend;
  if (!b.checkIndices)
    throw new ValueError(
      `${op}: backend '${b.name}' can neither read the class indices now nor check them on the device`,
    );
  const plain = y.view.mask ? y.contiguous() : y;
  b.checkIndices(plain.strided, 0, c, site);
  if (plain !== y) plain.dispose();
}

/** A ValueError naming the first class index outside [0, c) (other than the ignored one). */
function checkClassIndices(op: string, y: ArrayLike<number>, c: number, ignore: number | null = null): void {
  for (let i = 0; i < y.length; i++) {
    if (y[i] === ignore) continue;
    if (y[i] < 0 || y[i] >= c) {
      throw new ValueError(
        `${op}: target[${i}] = ${y[i]} is outside the class range [0, ${c}) of the input's ${c} columns`,
      );
    }
  }
}
