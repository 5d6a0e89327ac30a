/**
 * The two host capabilities that let an eager loop without tidy() free what it
 * dropped. A synchronous garbage collection (V8's `gc`, exposed at run time in Node through
 * `v8.setFlagsFromString('--expose-gc')` + `vm.runInNewContext('gc')`), and a turn of the
 * event loop: FinalizationRegistry callbacks (which release the storages of collected arrays,
 * core/src/ndarray.ts) run as tasks, never inside a chain of resolved awaits, so a training
 * loop that only awaits resolved promises would never see them without one.
 *
 * Node built-ins are reached through `process.getBuiltinModule` (no import statement), so
 * browser bundles stay free of them; in a browser `gcFunction()` is null and the page's own
 * collector decides (its awaits on GPU readback already yield to tasks).
 */

type GcFn = () => void;

let resolved = false;
let gcFn: GcFn | null = null;

interface NodeProcess {
  getBuiltinModule?: (id: string) => unknown;
}

function findGc(): GcFn | null {
  const g = (globalThis as { gc?: unknown }).gc;
  if (typeof g === 'function') return g as GcFn;
  const proc = (globalThis as { process?: NodeProcess }).process;
  const load = proc?.getBuiltinModule;
  if (typeof load !== 'function') return null;
  try {
    const v8 = load.call(proc, 'node:v8') as { setFlagsFromString(f: string): void };
    const vm = load.call(proc, 'node:vm') as { runInNewContext(code: string): unknown };
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc');
    return typeof fn === 'function' ? (fn as GcFn) : null;
  } catch {
    return null;
  }
}

/** The host's synchronous full collection, or null where none can be had (browsers). */
export function gcFunction(): GcFn | null {
  if (!resolved) {
    resolved = true;
    gcFn = findGc();
  }
  return gcFn;
}

/** Resolves after one macrotask, so pending FinalizationRegistry callbacks get to run. */
export function nextTask(): Promise<void> {
  const si = (globalThis as { setImmediate?: (f: () => void) => unknown }).setImmediate;
  return new Promise((resolve) => {
    if (typeof si === 'function') si(resolve);
    else setTimeout(resolve, 0);
  });
}
