/**
 * The two host capabilities that let an eager loop without tidy() free what it
 * dropped. A synchronous garbage collection (V8's `gc`, exposed at run time in Node through
 * `v8.setFlagsFromString('--expose-gc')` + `vm.runInNewContext('gc')`), and a turn of the
 * event loop: FinalizationRegistry callbacks (which release the storages of collected arrays,
 * core/src/ndarray.ts) run as tasks, never inside a chain of resolved awaits, so a training
 * loop that only awaits resolved promises would never see them without one.
 *
 * In a browser `gcFunction()` is null and the page's own collector decides (its awaits on GPU
 * readback already yield to tasks). Where the host finalizes synchronously (Node: core's
 * host-gc.ts), no task is needed and loops that never await are collected too (pressure.ts).
 */
import { hostGc } from '@surf/core';

/** The host's synchronous full collection, or null where none can be had (browsers). */
export function gcFunction(): (() => void) | null {
  return hostGc();
}

/** Resolves after one macrotask, so pending FinalizationRegistry callbacks get to run. */
export function nextTask(): Promise<void> {
  const si = (globalThis as { setImmediate?: (f: () => void) => unknown }).setImmediate;
  return new Promise((resolve) => {
    if (typeof si === 'function') si(resolve);
    else setTimeout(resolve, 0);
  });
}
