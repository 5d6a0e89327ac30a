import { DTypeError, E, Expr, NDArray, ShapeError, ValueError, broadcastShapes, fmtShape, normAxis } from '@surf/core';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import * as S from './shape';
import { takeAlong } from './gather';
import { X } from './fuse';
import { checkIndexRange } from './index-range';

/**
 * NumPy/PyTorch indexing, spelled as arguments of `t.index(...)` (JavaScript has no `t[...]`):
 *   number            one entry (the dim disappears); negative counts from the end
 *   ':' '1:5' '::2'   a slice as Python writes it ('start:stop:step', step > 0)
 *   { start, stop, step }  the same slice as an object (any field may be left out)
 *   null              a new dim of size 1 (Python's None / np.newaxis)
 *   '...'             as many ':' as needed (at most one)
 *   int32 Tensor, number[]  integer-array ("advanced") indexing, broadcast together
 * Basic indexing gives views (no kernel); a slice with step > 1 and integer arrays gather
 * (one kernel; gradients scatter-add back).
 */
export interface SliceSpec {
  start?: number | null;
  stop?: number | null;
  step?: number | null;
}
export type IndexArg = number | null | string | SliceSpec | Tensor | readonly number[];

interface Advanced {
  pos: number;
  idx: NDArray;
  size: number;
}

function parseSlice(op: string, a: string | SliceSpec): SliceSpec {
  if (typeof a !== 'string') return a;
  const parts = a.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw new ValueError(
      `${op}: cannot read ${JSON.stringify(a)} as a slice; expected 'start:stop' or 'start:stop:step' (parts may be empty), ':' or '...'`,
    );
  const num = (s: string): number | null => {
    const t = s.trim();
    if (t === '') return null;
    const v = Number(t);
    if (!Number.isInteger(v))
      throw new ValueError(`${op}: slice ${JSON.stringify(a)} has a non-integer part ${JSON.stringify(s)}`);
    return v;
  };
  return { start: num(parts[0]), stop: num(parts[1]), step: parts.length === 3 ? num(parts[2]) : null };
}

/** PyTorch's slice bounds: negatives count from the end, then clamp into [0, n]. */
function bounds(op: string, s: SliceSpec, n: number): [number, number, number] {
  const step = s.step ?? 1;
  if (!Number.isInteger(step) || step <= 0)
    throw new ValueError(`${op}: slice step ${step}; expected a positive integer (use flip() to reverse)`);
  const fix = (v: number | null | undefined, dflt: number) => {
    if (v === null || v === undefined) return dflt;
    if (!Number.isInteger(v)) throw new ValueError(`${op}: slice bound ${v}; expected an integer`);
    return Math.min(Math.max(v < 0 ? v + n : v, 0), n);
  };
  const start = fix(s.start, 0);
  return [start, Math.max(fix(s.stop, n), start), step];
}

function sliceDim(op: string, x: Tensor, dim: number, start: number, stop: number, step: number): Tensor {
  if (step === 1) return S.narrow(x, dim, start, stop - start);
  const picks = Int32Array.from({ length: Math.ceil((stop - start) / step) }, (_, i) => start + i * step);
  const idx = NDArray.fromData(x.nd(op).backend, picks, [picks.length]);
  try {
    return takeAlong(op, x, dim, idx);
  } finally {
    idx.dispose();
  }
}

/** torch's x[:, ..., start:end:step] on one dim. */
export function slice(x: Tensor, dim: number, start?: number | null, end?: number | null, step = 1): Tensor {
  const shape = x.nd('slice').shape;
  const ax = normAxis('slice', dim, shape.length);
  const [s, e, st] = bounds('slice', { start, stop: end, step }, shape[ax]);
  return sliceDim('slice', x, ax, s, e, st);
}

function toIndexArray(op: string, a: Tensor | readonly number[], n: number, backend: NDArray['backend']): NDArray {
  if (a instanceof Tensor) {
    const nd = a.nd(op);
    if (nd.dtype === 'bool')
      throw new DTypeError(
        `${op}: boolean-mask indexing gives a shape that depends on the data, which Surf does not read back; use where()/maskedFill(), or pass the int32 positions`,
      );
    if (nd.dtype !== 'int32')
      throw new DTypeError(`${op}: an index tensor has dtype ${nd.dtype}; expected int32 (use .int())`);
    // Negative entries count from the end, as in PyTorch; anything else outside the dim is an error.
    checkIndexRange(op, nd, { name: 'index', lo: -n, hi: n, range: `a dim of size ${n}` });
    return nd.reshape(nd.shape);
  }
  a.forEach((v) => {
    if (!Number.isInteger(v)) throw new ValueError(`${op}: index ${v} must be an integer`);
    if (v < -n || v >= n) throw new ValueError(`${op}: index ${v} is out of range for a dim of size ${n}`);
  });
  return NDArray.fromData(backend, Int32Array.from(a), [a.length]);
}

export function index(x: Tensor, args: readonly IndexArg[]): Tensor {
  const op = 'index';
  const shape = x.nd(op).shape;
  const backend = x.nd(op).backend;
  const ell = args.filter((a) => a === '...').length;
  if (ell > 1) throw new ValueError(`${op}: at most one '...' is allowed; got ${ell}`);
  const consumed = args.filter((a) => a !== null && a !== '...').length;
  if (consumed > shape.length)
    throw new ShapeError(
      `${op}: ${consumed} indices for a ${shape.length}-d tensor of shape ${fmtShape(shape)}; expected at most ${shape.length}`,
    );
  const full: IndexArg[] = [];
  for (const a of args) {
    if (a === '...') for (let k = 0; k < shape.length - consumed; k++) full.push(':');
    else full.push(a);
  }
  const adv: Advanced[] = [];
  try {
    return tidy(() => {
      let v = x;
      let d = 0;
      for (const a of full) {
        if (a === null) {
          v = S.unsqueeze(v, d);
          d++;
          continue;
        }
        const n = v.shape[d];
        if (typeof a === 'number') {
          if (!Number.isInteger(a))
            throw new ValueError(
              `${op}: index ${a} must be an integer (dim ${d} of size ${n} in shape ${fmtShape(v.shape)})`,
            );
          if (a < -n || a >= n)
            throw new ValueError(
              `${op}: index ${a} is out of range for dim ${d} of size ${n} in shape ${fmtShape(v.shape)}`,
            );
          const nv = S.narrow(v, d, a < 0 ? a + n : a, 1);
          v = S.reshape(
            nv,
            v.shape.filter((_, i) => i !== d),
            'index',
          );
          continue;
        }
        if (a instanceof Tensor || Array.isArray(a)) {
          adv.push({ pos: d, idx: toIndexArray(op, a as Tensor | readonly number[], n, backend), size: n });
          d++;
          continue;
        }
        if (typeof a === 'string' || (typeof a === 'object' && a !== null)) {
          const [s, e, st] = bounds(op, parseSlice(op, a as string | SliceSpec), n);
          if (!(s === 0 && e === n && st === 1)) v = sliceDim(op, v, d, s, e, st);
          d++;
          continue;
        }
        throw new ValueError(
          `${op}: cannot index with ${JSON.stringify(a)}; expected a number, a slice string like '1:3', {start, stop, step}, null, '...', an int32 Tensor or a number[]`,
        );
      }
      return adv.length ? advanced(v, adv) : v === x ? S.reshape(x, shape, 'index') : v;
    });
  } finally {
    adv.forEach((a) => a.idx.dispose());
  }
}

/** Integer-array indexing on the dims in `adv` (PyTorch's placement rule for the result dims). */
function advanced(v: Tensor, adv: Advanced[]): Tensor {
  const op = 'index';
  const B = broadcastShapes(op, ...adv.map((a) => a.idx.shape));
  const L = B.reduce((a, b) => a * b, 1);
  const shape = v.shape;
  const pos = adv.map((a) => a.pos);
  const rest = shape.map((_, i) => i).filter((i) => !pos.includes(i));
  const moved = S.permute(v, [...pos, ...rest]);
  const P = pos.reduce((a, p) => a * shape[p], 1);
  const flat = S.reshape(moved, [P, ...rest.map((i) => shape[i])], op);
  // One row number per index tuple, -1 if any entry is out of range (that row reads 0).
  let row: Expr = E.i(0),
    ok: Expr | null = null,
    mult = 1;
  for (let j = adv.length - 1; j >= 0; j--) {
    const n = adv[j].size;
    const raw = E.in(j);
    const w = E.where(E.lt(raw, E.i(0)), E.add(raw, E.i(n)), raw);
    const okj = X.and(X.not(E.lt(w, E.i(0))), E.lt(w, E.i(n)));
    ok = ok ? X.and(ok, okj) : okj;
    row = E.add(row, E.mul(w, E.i(mult)));
    mult *= n;
  }
  const [rows] = NDArray.elementwise(
    [E.where(ok!, row, E.i(-1))],
    adv.map((a) => a.idx),
    op,
  );
  const r1 = rows.reshape([L]);
  rows.dispose();
  let out: Tensor;
  try {
    out = takeAlong(op, flat, 0, r1);
  } finally {
    r1.dispose();
  }
  out = S.reshape(out, [...B, ...rest.map((i) => shape[i])], op);
  // Adjacent advanced dims keep their place; separated ones go first (NumPy's rule).
  const adjacent = pos.every((p, k) => k === 0 || p === pos[k - 1] + 1);
  if (adjacent && pos[0] > 0) {
    const nb = B.length;
    const before = rest.filter((i) => i < pos[0]).length;
    const order = [...Array(before).keys()].map((k) => nb + k);
    for (let k = 0; k < nb; k++) order.push(k);
    for (let k = nb + before; k < nb + rest.length; k++) order.push(k);
    out = S.permute(out, order);
  }
  return out;
}
