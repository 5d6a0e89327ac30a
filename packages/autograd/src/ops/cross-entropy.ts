import { DTypeError, E, Expr, NDArray, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { alias, fromOp } from '../node';
import { readSync } from '../move';
import { Tensor, checkTensor } from '../tensor';

/**
 * Softmax cross entropy of [N, C] logits against int32 class indices [N], as ONE op with a
 * hand-written backward. With w the smoothed target ((1 − ε)·onehot + ε/C), m the row max
 * and s = Σ exp(z − m):
 *   loss_i = Σ_j w_ij·(log s_i + m_i − z_ij)
 *   dloss_i/dz_ij = W_i·e_ij/s_i − w_ij,  W_i = Σ_j w_ij (1, or ε for an index outside [0, C)),
 * so the forward is max, exp, row sum, the weighted terms and their sum (5 kernels; one rows
 * kernel and the sum where the backend has Backend.crossEntropyRows, as both of Surf's do) and the backward is one
 * kernel reading exp(z − m) (saved, or recomputed from the logits after the rows kernel) and
 * s: no logSoftmax graph, no one-hot tensor, no mean op (the 1/N scale is a constant inside
 * the kernels). An index outside [0, C) is an error, never a silent 0: on the CPU backend the
 * indices are checked on the host at once; on a GPU a device-side assert (inside the rows
 * kernel, or Backend.checkIndices) sets the backend's error flag, and the next readback of
 * any tensor or sync() raises the ValueError naming the index, as CUDA's device asserts; the
 * rows with a bad index are NaN too, so nothing derived from them reads as a real loss.
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
  /** exp(z − m) over inputs z, m. */
  exp: Expr;
  /** Each element's loss term over inputs z, m, s, y, cols. */
  term: Expr;
  /** d loss / d z with the seed 1, over inputs (unread), e, s, y, cols. */
  grad: Expr;
  /** The same times the incoming gradient, input 0. */
  gradOfG: Expr;
  /** The rows kernel's backward (Backend.crossEntropyRows): over (g), z, m, s, y, cols, exp(z − m) recomputed. */
  rowsGrad: Expr;
  rowsGradOfG: Expr;
}

// One set of expressions per (classes, smoothing, scale): the same objects every step, so the
// backends' per-Expr caches hit instead of walking fresh trees (no jit-dynamic values inside).
const ceCache = new Map<string, CeExprs>();

function ceExprs(c: number, eps: number, scale: number): CeExprs {
  const key = `${c}|${eps}|${scale}`;
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
  const gradOf = (e: Expr, s: Expr, yIdx: number): Expr =>
    E.mul(E.f(scale), E.sub(E.div(E.mul(rowW(yIdx), e), s), weight(yIdx)));
  // Forward terms: inputs z, m, s, y, cols. Without smoothing only the target column counts
  // (a where, so an infinite logit elsewhere cannot turn 0·inf into NaN).
  const nll = E.sub(E.add(E.log(E.in(2)), finiteOr0(E.in(1))), E.in(0));
  const term0 =
    eps === 0 ? E.where(hitAt(3), E.mul(nll, E.f(scale)), E.f(0)) : E.mul(E.mul(weight(3), nll), E.f(scale));
  // A row whose index is outside [0, C) is NaN, so a bad label can never read as a loss of 0.
  const term = E.where(E.lt(E.in(3), E.i(0)), E.f(NaN), E.where(E.lt(E.in(3), E.i(c)), term0, E.f(NaN)));
  const exp = (z: Expr, m: Expr): Expr => E.exp(E.sub(z, finiteOr0(m)));
  const grad = gradOf(E.in(1), E.in(2), 3);
  const rowsGrad = gradOf(exp(E.in(1), E.in(2)), E.in(3), 4);
  x = {
    exp: exp(E.in(0), E.in(1)),
    term,
    grad,
    gradOfG: E.mul(E.in(0), grad),
    rowsGrad,
    rowsGradOfG: E.mul(E.in(0), rowsGrad),
  };
  if (ceCache.size >= 64) ceCache.clear();
  ceCache.set(key, x);
  return x;
}

export function softmaxCrossEntropy(
  logits: Tensor,
  target: Tensor,
  opts: { labelSmoothing?: number; reduction?: CrossEntropyReduction } = {},
): Tensor {
  const op = 'crossEntropy';
  checkTensor(op, logits, 'input');
  checkTensor(op, target, 'target');
  opts = parseOptions<typeof opts>(op, opts, { labelSmoothing: 'any', reduction: 'any' });
  const eps = opts.labelSmoothing ?? 0;
  if (typeof eps !== 'number' || !(eps >= 0 && eps <= 1))
    throw new ValueError(`${op}: labelSmoothing must be in [0, 1]; got ${eps}`);
  const reduction = opts.reduction ?? 'mean';
  if (reduction !== 'mean' && reduction !== 'sum' && reduction !== 'none')
    throw new ValueError(`${op}: reduction must be 'mean', 'sum' or 'none'; got ${JSON.stringify(reduction)}`);
  const zn0 = logits.nd(op);
  const yn = target.nd(op);
  if (zn0.ndim !== 2) throw new ShapeError(`${op}: input has shape ${fmtShape(zn0.shape)}; expected [batch, classes]`);
  if (yn.dtype !== 'int32') throw new DTypeError(`${op}: target has dtype ${yn.dtype}; expected int32 class indices`);
  const [n, c] = zn0.shape;
  if (yn.ndim !== 1 || yn.shape[0] !== n)
    throw new ShapeError(
      `${op}: target has shape ${fmtShape(yn.shape)}; expected [${n}] (one class index per row of the input ${fmtShape(zn0.shape)})`,
    );
  const hostY = readSync(yn, false);
  const b = zn0.backend;
  const site = { op, name: 'target', range: `the class range [0, ${c}) of the input's ${c} columns` };
  if (hostY) checkClassIndices(op, hostY, c);
  else if (!b.crossEntropyRows) deviceCheckClassIndices(op, yn, c, site);
  // The mean of no rows is NaN, as in PyTorch (and the gradient of nothing is empty).
  if (n === 0 && reduction === 'mean')
    return fromOp(op, NDArray.full(zn0.backend, [], NaN), [logits], () => [NDArray.full(zn0.backend, zn0.shape, 0)]);
  const zn = zn0.dtype === 'float32' ? zn0 : zn0.cast('float32');
  const scale = reduction === 'mean' ? 1 / n : 1;
  const y2 = yn.reshape([n, 1]);
  const cols = NDArray.fromData(zn.backend, iota(c), [1, c], 'int32');
  if (b.crossEntropyRows) return fusedRows(op, logits, zn, zn0, yn, y2, cols, { c, eps, scale, reduction, site });
  const x = ceExprs(c, eps, scale);
  const m = zn.max(1, true);
  const [e] = NDArray.elementwise([x.exp], [zn, m], op);
  const s = e.sum(1, true);
  const [terms] = NDArray.elementwise([x.term], [zn, m, s, y2, cols], op);
  m.dispose();
  if (zn !== zn0) zn.dispose();
  const out = reduction === 'none' ? terms.sum(1) : terms.sum();
  terms.dispose();
  const result = fromOp(
    op,
    out,
    [logits],
    (g) => {
      // g is a scalar, or [N] for 'none' (made [N, 1]).
      const gk = reduction === 'none' ? g.reshape([n, 1]) : alias(g);
      const [gz] = NDArray.elementwise([x.gradOfG], [gk, e, s, y2, cols], `${op} backward`);
      gk.dispose();
      return [gz];
    },
    [e, s, y2, cols],
    () => {
      // loss.backward() with the implicit seed 1: the same kernel without g (e stands in for
      // input 0, which the expression does not read).
      const [gz] = NDArray.elementwise([x.grad], [e, e, s, y2, cols], `${op} backward`);
      return [gz];
    },
  );
  return result;
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
  });
  if (plainY !== yn) plainY.dispose();
  const m = NDArray.fromStorage(ms, [n, 1]);
  const s = NDArray.fromStorage(ss, [n, 1]);
  const rows = NDArray.fromStorage(rs, [n]);
  const out = o.reduction === 'none' ? rows : ts ? NDArray.fromStorage(ts, []) : rows.sum();
  if (out !== rows) rows.dispose();
  // The backward reads the logits again: keep a reference (a float32 copy when they were cast).
  const z = zn === zn0 ? alias(zn) : zn;
  const x = ceExprs(o.c, o.eps, o.scale);
  return fromOp(
    op,
    out,
    [logits],
    (g) => {
      const gk = o.reduction === 'none' ? g.reshape([n, 1]) : alias(g);
      const [gz] = NDArray.elementwise([x.rowsGradOfG], [gk, z, m, s, y2, cols], `${op} backward`);
      gk.dispose();
      return [gz];
    },
    [z, m, s, y2, cols],
    () => {
      const [gz] = NDArray.elementwise([x.rowsGrad], [z, z, m, s, y2, cols], `${op} backward`);
      return [gz];
    },
  );
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

/** A ValueError naming the first class index outside [0, c). */
function checkClassIndices(op: string, y: ArrayLike<number>, c: number): void {
  for (let i = 0; i < y.length; i++) {
    if (y[i] < 0 || y[i] >= c) {
      throw new ValueError(
        `${op}: target[${i}] = ${y[i]} is outside the class range [0, ${c}) of the input's ${c} columns`,
      );
    }
  }
}
