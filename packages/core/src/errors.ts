// Every failure Surf raises is a SurfError, so apps can catch the library's errors as one
// family and tell them from their own bugs. Messages name the op, what was given, and what
// was expected: `ShapeError: matmul: inner dimensions differ: a [2,3] and b [4,5] (expected a's last dim 3 to equal b's second-to-last 4)`.

export class SurfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Shapes that do not fit the op (broadcast, matmul inner dims, reshape sizes, axes). */
export class ShapeError extends SurfError {}

/** A dtype the op does not accept, or two operands whose dtypes differ. */
export class DTypeError extends SurfError {}

/** An argument outside its domain that is not a shape or dtype (negative pad, bad seed, unknown option). */
export class ValueError extends SurfError {}

/** An argument of the wrong JS type (a string where a tensor or number goes, undefined for an input). */
export class SurfTypeError extends SurfError {}

/** A tensor used after dispose(), or after its backend was destroyed. */
export class DisposedError extends SurfError {}

/** The backend cannot run: no adapter, a lost device, a GPU validation error turned into an op error. */
export class BackendError extends SurfError {}

/** The GPU device was lost (driver reset, destroy()); re-run init() to get a new one. */
export class DeviceLostError extends BackendError {}

/** Formats a shape the same way in every message: [2,3]. */
export function fmtShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}
