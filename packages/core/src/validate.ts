import type { Backend, Strided } from './backend';
import { BackendError, ShapeError, ValueError, fmtShape } from './errors';

/**
 * Checks a backend runs on every operand before touching memory, so a bad view is an error
 * naming the op and not a silent read of garbage (CPU) or a raw validation message (GPU).
 * All O(ndim).
 */
export function checkOperand(backend: Backend, op: string, label: string, x: Strided, opts: { mask?: boolean } = {}): void {
  if (x.storage.backend !== backend) {
    throw new BackendError(`${op}: ${label} lives on another backend (${x.storage.backend.name}); expected ${backend.name} storage`);
  }
  const v = x.view;
  if (v.mask && opts.mask === false) {
    throw new ValueError(`${op}: ${label} has a masked (padded) view ${v}; expected no mask (make it contiguous first)`);
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
    throw new ShapeError(`${op}: ${label} view ${v} reads indices ${lo}..${hi}, outside its storage of ${x.storage.size} elements`);
  }
}

/** An operand's view must have exactly the shape the op works on. */
export function checkOperandShape(op: string, label: string, x: Strided, shape: readonly number[]): void {
  const s = x.view.shape;
  if (s.length !== shape.length || s.some((d, i) => d !== shape[i])) {
    throw new ShapeError(`${op}: ${label} has shape ${fmtShape(s)} but the op's shape is ${fmtShape(shape)}; expected them equal (broadcast the input first)`);
  }
}
