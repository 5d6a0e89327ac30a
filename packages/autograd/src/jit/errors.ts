import { SurfError } from '@surf/core';

/** A function jit cannot capture or replay (a readback inside it, work that differs per call). */
export class JitError extends SurfError {
  /** @internal The two calls differed in structure (an optimizer's first steps): record again. */
  constructor(
    message: string,
    readonly structural = false,
  ) {
    super(message);
  }
}
