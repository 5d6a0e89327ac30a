import { SurfError } from '@surf/core';

/** A function jit cannot capture or replay (a readback inside it, work that differs per call). */
export class JitError extends SurfError {}
