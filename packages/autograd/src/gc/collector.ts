/**
 * A turn of the event loop, for hosts that finalize only in tasks: FinalizationRegistry
 * callbacks (which release the storages of collected arrays, core/src/ndarray.ts) run as tasks,
 * never inside a chain of resolved awaits, so a training loop that only awaits resolved promises
 * would never see them without one. The collection itself is core's `hostGc()` (host-gc.ts);
 * where the host finalizes synchronously no task is needed (pressure.ts).
 */

/** Resolves after one macrotask, so pending FinalizationRegistry callbacks get to run. */
export function nextTask(): Promise<void> {
  const si = (globalThis as { setImmediate?: (f: () => void) => unknown }).setImmediate;
  return new Promise((resolve) => {
    if (typeof si === 'function') si(resolve);
    else setTimeout(resolve, 0);
  });
}
