import type { AttentionOptions, Strided } from './backend';
import { BackendError, DTypeError, ShapeError, ValueError, fmtShape } from './errors';
import { NDArray } from './ndarray';
import { broadcastShapes, shapesEqual } from './shape';

/**
 * The contract's attention arguments, checked the same way by every backend before it
 * touches memory (see Backend.attention for what they mean).
 */
export function checkAttentionArgs(
  op: string,
  q: Strided,
  k: Strided,
  v: Strided,
  opts: AttentionOptions,
  grads?: { out: Strided; lse: Strided; gOut: Strided },
): void {
  for (const [name, x] of [
    ['q', q],
    ['k', k],
    ['v', v],
  ] as const) {
    if (x.storage.dtype !== 'float32')
      throw new DTypeError(`${op}: ${name} has dtype ${x.storage.dtype}; expected float32`);
  }
  const qs = q.view.shape,
    ks = k.view.shape,
    vs = v.view.shape;
  const nd = qs.length;
  const batch = qs.slice(0, -2);
  const sameBatch = (s: readonly number[]) => s.length === nd && s.slice(0, -2).every((d, i) => d === batch[i]);
  if (nd < 2 || !sameBatch(ks) || !sameBatch(vs) || qs[nd - 1] !== ks[nd - 1] || ks[nd - 2] !== vs[nd - 2]) {
    throw new ShapeError(
      `${op}: got q ${fmtShape(qs)}, k ${fmtShape(ks)}, v ${fmtShape(vs)}; expected [...batch, L, E], [...batch, S, E] and [...batch, S, Ev] with identical batch dims`,
    );
  }
  if (typeof opts.scale !== 'number' || !Number.isFinite(opts.scale))
    throw new ValueError(`${op}: scale ${opts.scale}; expected a finite number`);
  const L = qs[nd - 2],
    S = ks[nd - 2],
    Ev = vs[nd - 1];
  if (opts.mask) {
    const m = opts.mask;
    if (m.storage.dtype !== 'float32' && m.storage.dtype !== 'bool')
      throw new DTypeError(
        `${op}: mask has dtype ${m.storage.dtype}; expected float32 (added to the scores) or bool (true = attend)`,
      );
    if (!shapesEqual(m.view.shape, [...batch, L, S]))
      throw new ShapeError(
        `${op}: mask has shape ${fmtShape(m.view.shape)}; expected ${fmtShape([...batch, L, S])} (broadcast it first)`,
      );
  }
  if (grads) {
    const want: [string, Strided, number[]][] = [
      ['out', grads.out, [...batch, L, Ev]],
      ['lse', grads.lse, [...batch, L]],
      ['gOut', grads.gOut, [...batch, L, Ev]],
    ];
    for (const [name, x, shape] of want) {
      if (x.storage.dtype !== 'float32')
        throw new DTypeError(`${op}: ${name} has dtype ${x.storage.dtype}; expected float32`);
      if (!shapesEqual(x.view.shape, shape))
        throw new ShapeError(`${op}: ${name} has shape ${fmtShape(x.view.shape)}; expected ${fmtShape(shape)}`);
    }
  }
}

export interface AttentionNdOptions {
  scale: number;
  causal?: boolean;
  /** float32 (added) or bool (true = attend), broadcastable to [...batch, L, S]. */
  mask?: NDArray | null;
}

interface Prepared {
  batch: number[];
  views: NDArray[];
  temps: NDArray[];
}

/** Broadcasts the batch dims of q/k/v (and the mask) and drops view masks the contract forbids. */
function prepare(
  op: string,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  mask: NDArray | null | undefined,
  extra: NDArray[],
): Prepared {
  const all = [q, k, v, ...extra, ...(mask ? [mask] : [])];
  for (const x of all)
    if (x.backend !== q.backend)
      throw new BackendError(`${op}: operands live on different backends (${q.backend.name} and ${x.backend.name})`);
  if (q.ndim < 2 || k.ndim < 2 || v.ndim < 2)
    throw new ShapeError(
      `${op}: got q ${fmtShape(q.shape)}, k ${fmtShape(k.shape)}, v ${fmtShape(v.shape)}; expected each at least 2-d ([..., L, E], [..., S, E], [..., S, Ev])`,
    );
  if (q.shape[q.ndim - 1] !== k.shape[k.ndim - 1])
    throw new ShapeError(
      `${op}: q ${fmtShape(q.shape)} and k ${fmtShape(k.shape)} differ in the last dim (E); expected equal`,
    );
  if (k.shape[k.ndim - 2] !== v.shape[v.ndim - 2])
    throw new ShapeError(
      `${op}: k ${fmtShape(k.shape)} and v ${fmtShape(v.shape)} differ in the key count (S); expected equal`,
    );
  const batch = broadcastShapes(op, q.shape.slice(0, -2), k.shape.slice(0, -2), v.shape.slice(0, -2));
  const L = q.shape[q.ndim - 2],
    S = k.shape[k.ndim - 2];
  const temps: NDArray[] = [];
  const fit = (x: NDArray, shape: number[]): NDArray => {
    const u = x.view.mask ? x.contiguous() : x;
    if (u !== x) temps.push(u);
    const e = u.expand(shape);
    temps.push(e);
    return e;
  };
  const views = [
    fit(q, [...batch, ...q.shape.slice(-2)]),
    fit(k, [...batch, ...k.shape.slice(-2)]),
    fit(v, [...batch, ...v.shape.slice(-2)]),
  ];
  const Ev = v.shape[v.ndim - 1];
  extra.forEach((x, i) => views.push(fit(x, i === 1 ? [...batch, L] : [...batch, L, Ev])));
  if (mask) {
    const ms = broadcastShapes(`${op} mask`, mask.shape, [...batch, L, S]);
    if (!shapesEqual(ms, [...batch, L, S]))
      throw new ShapeError(
        `${op}: mask of shape ${fmtShape(mask.shape)} does not broadcast to the scores' shape ${fmtShape([...batch, L, S])}`,
      );
    views.push(fit(mask, [...batch, L, S]));
  }
  return { batch, views, temps };
}

/** The contract's attention on NDArrays with broadcast batch dims: { out [...batch, L, Ev], lse [...batch, L] }. */
export function attentionNd(
  q: NDArray,
  k: NDArray,
  v: NDArray,
  opts: AttentionNdOptions,
): { out: NDArray; lse: NDArray } {
  const p = prepare('attention', q, k, v, opts.mask, []);
  try {
    const [qv, kv, vv, mv] = p.views;
    const r = q.backend.attention(qv.strided, kv.strided, vv.strided, {
      scale: opts.scale,
      causal: !!opts.causal,
      mask: mv?.strided,
    });
    const L = q.shape[q.ndim - 2],
      Ev = v.shape[v.ndim - 1];
    return { out: NDArray.fromStorage(r.out, [...p.batch, L, Ev]), lse: NDArray.fromStorage(r.lse, [...p.batch, L]) };
  } finally {
    p.temps.forEach((t) => t.dispose());
  }
}

/** Gradients of attentionNd, each with the broadcast batch dims (the caller sums them back). */
export function attentionBackwardNd(
  q: NDArray,
  k: NDArray,
  v: NDArray,
  out: NDArray,
  lse: NDArray,
  gOut: NDArray,
  opts: AttentionNdOptions,
): { dq: NDArray; dk: NDArray; dv: NDArray } {
  const p = prepare('attention backward', q, k, v, opts.mask, [out, lse, gOut]);
  try {
    const [qv, kv, vv, ov, lv, gv, mv] = p.views;
    const r = q.backend.attentionBackward(qv.strided, kv.strided, vv.strided, ov.strided, lv.strided, gv.strided, {
      scale: opts.scale,
      causal: !!opts.causal,
      mask: mv?.strided,
    });
    const b = p.batch;
    return {
      dq: NDArray.fromStorage(r.dq, [...b, ...q.shape.slice(-2)]),
      dk: NDArray.fromStorage(r.dk, [...b, ...k.shape.slice(-2)]),
      dv: NDArray.fromStorage(r.dv, [...b, ...v.shape.slice(-2)]),
    };
  } finally {
    p.temps.forEach((t) => t.dispose());
  }
}
