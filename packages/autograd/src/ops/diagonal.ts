import { NDArray, ShapeError, ValueError, normAxis } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { gatherFlat } from './gather';

/**
 * diag and diagonal as gathers at flat positions worked out on the host (one kernel; the
 * gradient scatter-adds back, and positions of -1 read 0 where diag builds a matrix).
 */
function gatherAt(op: string, x: Tensor, pos: Int32Array, shape: number[]): Tensor {
  const p = NDArray.fromData(x.nd(op).backend, pos, shape, 'int32');
  return gatherFlat(op, x, p);
}

function checkInt(op: string, what: string, v: number): void {
  if (!Number.isInteger(v)) throw new ValueError(`${op}: ${what} ${v}; expected an integer`);
}

/**
 * torch.diagonal: the entries x[..., i, ..., i + offset, ...] of dims dim1 and dim2, as a new
 * last dim (the other dims keep their order). A copy, not a view as in PyTorch.
 */
export function diagonal(x: Tensor, offset = 0, dim1 = 0, dim2 = 1): Tensor {
  checkTensor('diagonal', x, 'input');
  checkInt('diagonal', 'offset', offset);
  const shape = x.shape;
  if (shape.length < 2) throw new ShapeError(`diagonal: input has ${shape.length} dims; expected at least 2`);
  const a = normAxis('diagonal', dim1, shape.length);
  const b = normAxis('diagonal', dim2, shape.length);
  if (a === b) throw new ValueError(`diagonal: dim1 and dim2 are both ${a}; expected two different dims`);
  const r0 = offset >= 0 ? 0 : -offset;
  const c0 = offset >= 0 ? offset : 0;
  const len = Math.max(0, Math.min(shape[a] - r0, shape[b] - c0));
  const rest = shape.map((_, i) => i).filter((i) => i !== a && i !== b);
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d];
  }
  const outShape = [...rest.map((d) => shape[d]), len];
  const count = outShape.reduce((p, q) => p * q, 1);
  const pos = new Int32Array(count);
  const idx = new Array<number>(rest.length).fill(0);
  for (let k = 0; k < count; k++) {
    let rem = Math.floor(k / len);
    for (let j = rest.length - 1; j >= 0; j--) {
      idx[j] = rem % shape[rest[j]];
      rem = Math.floor(rem / shape[rest[j]]);
    }
    const i = k % len;
    let p = (r0 + i) * strides[a] + (c0 + i) * strides[b];
    rest.forEach((d, j) => (p += idx[j] * strides[d]));
    pos[k] = p;
  }
  return gatherAt('diagonal', x, pos, outShape);
}

/**
 * torch.diag: a 1-d tensor becomes the square matrix with it on diagonal `offset` (zeros
 * elsewhere); a 2-d tensor gives its diagonal `offset` as a 1-d tensor.
 */
export function diag(x: Tensor, offset = 0): Tensor {
  checkTensor('diag', x, 'input');
  checkInt('diag', 'offset', offset);
  if (x.ndim === 2) return diagonal(x, offset, 0, 1);
  if (x.ndim !== 1) throw new ShapeError(`diag: input has ${x.ndim} dims; expected a 1-d or 2-d tensor`);
  const n = x.shape[0];
  const m = n + Math.abs(offset);
  const pos = new Int32Array(m * m).fill(-1);
  for (let i = 0; i < n; i++) {
    const r = offset >= 0 ? i : i - offset;
    const c = offset >= 0 ? i + offset : i;
    pos[r * m + c] = i;
  }
  return gatherAt('diag', x, pos, [m, m]);
}
