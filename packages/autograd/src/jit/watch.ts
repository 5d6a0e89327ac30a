/**
 * Which tensor objects a recorded call made and read. The Tensor class reports here (one
 * null check per read when no recording runs), so the recorder can guard the pre-existing
 * tensors the call read: a replay binds their storages, and must not run once one of them
 * holds other data (see guards.ts). Kept free of imports so tensor.ts can depend on it.
 */
export interface TensorWatch {
  read(t: object): void;
  made(t: object): void;
}

let watch: TensorWatch | null = null;

/** @internal The watch in force (null outside a recording). */
export function tensorWatch(): TensorWatch | null {
  return watch;
}

/** @internal Installs a watch (the recorder, around the traced call); returns the previous one. */
export function setTensorWatch(w: TensorWatch | null): TensorWatch | null {
  const prev = watch;
  watch = w;
  return prev;
}
