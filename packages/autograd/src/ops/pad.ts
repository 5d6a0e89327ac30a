import { ShapeError, SurfTypeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { cat } from './join';
import { onesLike } from '../creation';
import { tidy } from '../scope';

export type PadMode = 'constant' | 'reflect' | 'replicate' | 'circular';

export interface PadOptions {
  /** 'constant' (default), 'reflect' (mirror without the edge), 'replicate' (the edge) or 'circular' (wrap). */
  mode?: PadMode;
  /** The fill of 'constant' padding (default 0). */
  value?: number;
}

/**
 * torch.nn.functional.pad: `pad` is PyTorch's flat list, last dim first: (left, right) pads the
 * last dim, (left, right, top, bottom) the last two, and so on. Constant padding may be
 * negative (it crops). The other modes are composed from narrow, flip, expand and cat, so their
 * gradients are those ops' (a padded element's gradient flows back to the element it copies).
 */
export function pad(x: Tensor, padding: readonly number[], options: PadOptions = {}): Tensor {
  const op = 'pad';
  checkTensor(op, x, 'the input');
  const o = parseOptions<PadOptions>(op, options, {
    mode: ['constant', 'reflect', 'replicate', 'circular'],
    value: 'number',
  });
  const mode = o.mode ?? 'constant';
  const pairs = padPairs(op, x, padding);
  if (mode !== 'constant' && o.value !== undefined && o.value !== 0)
    throw new ValueError(`${op}: value ${o.value} is only used by mode 'constant'; got mode '${mode}'`);
  // The intermediate crops and pieces are freed here; only the result lives on.
  return tidy(() => {
    if (mode === 'constant') return constantPad(x, pairs, o.value ?? 0);
    let out = x;
    for (const [dim, l, r] of pairs) out = padDim(op, out, dim, l, r, mode);
    return out;
  });
}

/** [dim, left, right] for each padded dim, last dim first, from PyTorch's flat list. */
function padPairs(op: string, x: Tensor, padding: readonly number[]): [number, number, number][] {
  if (!Array.isArray(padding) || padding.some((p) => Array.isArray(p)))
    throw new SurfTypeError(
      `${op}: padding must be PyTorch's flat list, last dim first ([left, right, top, bottom, ...]); got ${JSON.stringify(padding)}`,
    );
  if (padding.length % 2 !== 0 || padding.length / 2 > x.ndim || !padding.every((p) => Number.isInteger(p)))
    throw new ValueError(
      `${op}: padding ${JSON.stringify(padding)} must be an even number of integers, at most 2 per dim of the input ${fmtShape(x.shape)} (last dim first)`,
    );
  const out: [number, number, number][] = [];
  for (let k = 0; k < padding.length / 2; k++) out.push([x.ndim - 1 - k, padding[2 * k], padding[2 * k + 1]]);
  return out;
}

function constantPad(x: Tensor, pairs: [number, number, number][], value: number): Tensor {
  // Negative widths crop first; the rest is a zero-padding view plus the fill outside x.
  let y = x;
  for (const [dim, l, r] of pairs) {
    const n = y.shape[dim];
    const start = Math.max(0, -l);
    const len = n - start - Math.max(0, -r);
    if (len < 0)
      throw new ShapeError(`pad: crops ${-l} + ${-r} from dim ${dim} of size ${n} in shape ${fmtShape(x.shape)}`);
    if (start !== 0 || len !== n) y = y.narrow(dim, start, len);
  }
  const widths = y.shape.map(() => [0, 0] as [number, number]);
  for (const [dim, l, r] of pairs) widths[dim] = [Math.max(0, l), Math.max(0, r)];
  if (widths.every(([a, b]) => a === 0 && b === 0)) return y;
  const padded = zeroPad(y, widths);
  if (value === 0) return padded;
  // The fill: value where the input is not (a constant, so no gradient flows into it).
  const outside = zeroPad(onesLike(y), widths).neg().add(1);
  return padded.add(outside.mul(value));
}

/** A zero-padding view; its gradient crops. */
function zeroPad(y: Tensor, widths: [number, number][]): Tensor {
  const nd = y.nd('pad');
  const shape = nd.shape.slice();
  return fromOp('pad', nd.pad(widths), [y], (g) => [
    g.crop(shape.map((d, i) => [widths[i][0], widths[i][0] + d] as [number, number])),
  ]);
}

function padDim(op: string, x: Tensor, dim: number, l: number, r: number, mode: PadMode): Tensor {
  if (l === 0 && r === 0) return x;
  const n = x.shape[dim];
  if (l < 0 || r < 0) throw new ValueError(`${op}: mode '${mode}' takes widths >= 0; got ${l}, ${r} for dim ${dim}`);
  if (mode === 'reflect' && (l >= n || r >= n))
    throw new ValueError(
      `${op}: reflect padding ${l}, ${r} of dim ${dim} must be smaller than its size ${n} (input ${fmtShape(x.shape)})`,
    );
  if (mode === 'circular' && (l > n || r > n))
    throw new ValueError(
      `${op}: circular padding ${l}, ${r} of dim ${dim} must be at most its size ${n} (input ${fmtShape(x.shape)})`,
    );
  if (n === 0) throw new ShapeError(`${op}: mode '${mode}' cannot pad dim ${dim} of size 0 in ${fmtShape(x.shape)}`);
  const edge = (start: number) => {
    const s = x.narrow(dim, start, 1);
    return (w: number) => s.expand(s.shape.map((d, i) => (i === dim ? w : d)));
  };
  let left: Tensor | null = null;
  let right: Tensor | null = null;
  if (mode === 'reflect') {
    if (l > 0) left = x.narrow(dim, 1, l).flip([dim]);
    if (r > 0) right = x.narrow(dim, n - 1 - r, r).flip([dim]);
  } else if (mode === 'replicate') {
    if (l > 0) left = edge(0)(l);
    if (r > 0) right = edge(n - 1)(r);
  } else {
    if (l > 0) left = x.narrow(dim, n - l, l);
    if (r > 0) right = x.narrow(dim, 0, r);
  }
  return cat([...(left ? [left] : []), x, ...(right ? [right] : [])], dim);
}
