import type { Backend, ReduceOp, Strided } from './backend';
import { BackendError, DTypeError, ShapeError, ValueError, fmtShape } from './errors';

/**
 * Checks a backend runs on every operand before touching memory, so a bad view is an error
 * naming the op and not a silent read of garbage (CPU) or a raw validation message (GPU).
 * All O(ndim).
 */
export function checkOperand(
  backend: Backend,
  op: string,
  label: string,
  x: Strided,
  opts: { mask?: boolean } = {},
): void {
  if (x.storage.backend !== backend) {
    throw new BackendError(
      `${op}: ${label} lives on another backend (${x.storage.backend.name}); expected ${backend.name} storage`,
    );
  }
  const v = x.view;
  if (v.mask && opts.mask === false) {
    throw new ValueError(
      `${op}: ${label} has a masked (padded) view ${v}; expected no mask (make it contiguous first)`,
    );
  }
  // The lowest and highest buffer index the view can read (only inside the mask).
  let lo = v.offset;
  let hi = v.offset;
  for (let d = 0; d < v.ndim; d++) {
    const [a, b] = v.mask ? v.mask[d] : [0, v.shape[d]];
    if (b <= a) return; // nothing is read at all
    const s = v.strides[d];
    lo += Math.min(a * s, (b - 1) * s);
    hi += Math.max(a * s, (b - 1) * s);
    // Without a mask, index a=0 still contributes 0, so lo/hi stay correct.
  }
  if (lo < 0 || hi >= x.storage.size) {
    throw new ShapeError(
      `${op}: ${label} view ${v} reads indices ${lo}..${hi}, outside its storage of ${x.storage.size} elements`,
    );
  }
}

/** An operand's view must have exactly the shape the op works on. */
export function checkOperandShape(op: string, label: string, x: Strided, shape: readonly number[]): void {
  const s = x.view.shape;
  if (s.length !== shape.length || s.some((d, i) => d !== shape[i])) {
    throw new ShapeError(
      `${op}: ${label} has shape ${fmtShape(s)} but the op's shape is ${fmtShape(shape)}; expected them equal (broadcast the input first)`,
    );
  }
}

// The arguments of the contract's reduce, matmul and gather, checked the same way by every
// backend before it touches memory.

export function checkReduceArgs(op: ReduceOp, x: Strided, axes: readonly number[]): void {
  if (op !== 'sum' && op !== 'max')
    throw new ValueError(`reduce: unknown op ${JSON.stringify(op)}; expected 'sum' or 'max'`);
  if (x.storage.dtype === 'bool') throw new DTypeError(`${op}: got dtype bool; expected float32 or int32 (cast first)`);
  const nd = x.view.ndim;
  if (!axes.every((a, i) => Number.isInteger(a) && a >= 0 && a < nd && (i === 0 || a > axes[i - 1]))) {
    throw new ShapeError(
      `${op}: axes ${JSON.stringify(axes)} are not sorted unique axes of a ${nd}-d tensor of shape ${fmtShape(x.view.shape)}`,
    );
  }
}

export function checkMatmulArgs(a: Strided, b: Strided): void {
  if (a.storage.dtype !== 'float32' || b.storage.dtype !== 'float32')
    throw new DTypeError(`matmul: got dtypes ${a.storage.dtype} and ${b.storage.dtype}; expected float32`);
  const as = a.view.shape,
    bs = b.view.shape;
  const nd = as.length;
  if (nd < 2 || bs.length !== nd || as[nd - 1] !== bs[nd - 2] || as.slice(0, -2).some((d, i) => d !== bs[i])) {
    throw new ShapeError(
      `matmul: got a ${fmtShape(as)} and b ${fmtShape(bs)}; expected [...batch, m, k] and [...batch, k, n] with identical batch dims`,
    );
  }
}

export function checkGatherArgs(x: Strided, axis: number, idx: Strided): void {
  const nd = x.view.ndim;
  if (!(Number.isInteger(axis) && axis >= 0 && axis < nd))
    throw new ShapeError(`gather: axis ${axis} for source shape ${fmtShape(x.view.shape)}; expected 0 <= axis < ${nd}`);
  if (idx.storage.dtype !== 'int32')
    throw new DTypeError(`gather: index has dtype ${idx.storage.dtype}; expected int32`);
  if (idx.view.ndim !== 1)
    throw new ShapeError(`gather: index has shape ${fmtShape(idx.view.shape)}; expected a 1-d index`);
}
