import { ValueError } from '@surf/core';

let enabled = true;

/** Whether ops record the graph that backward() needs (false inside noGrad). */
export function isGradEnabled(): boolean {
  return enabled;
}

/**
 * Runs `fn` without recording a graph (evaluation, optimizer updates): results do not
 * require grad and no arrays are saved for backward. Synchronous, like tidy.
 */
export function noGrad<T>(fn: () => T): T {
  const prev = enabled;
  enabled = false;
  try {
    const r = fn();
    if (r instanceof Promise)
      throw new ValueError('noGrad: fn returned a Promise; noGrad is synchronous (await outside it)');
    return r;
  } finally {
    enabled = prev;
  }
}

/** Re-enables recording inside a noGrad block (PyTorch's enable_grad). */
export function enableGrad<T>(fn: () => T): T {
  const prev = enabled;
  enabled = true;
  try {
    return fn();
  } finally {
    enabled = prev;
  }
}
