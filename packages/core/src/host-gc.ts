/**
 * The host's garbage collector, as far as a library can reach it. Tensors nobody disposed are
 * freed by FinalizationRegistry callbacks when V8 collects them; V8 runs those callbacks as
 * tasks, so a training loop that never awaits would never see them and its memory would grow
 * without bound. Node's V8 can run them synchronously (`FinalizationRegistry.prototype
 * .cleanupSome`, behind a V8 flag that takes effect in contexts created after it is set): a
 * registry made from such a context lets `collectSync()` free what a loop dropped in the middle
 * of the loop, with no await. Where that cannot be had (browsers, other engines), registries are
 * plain and `collectSync()` returns false; the collector then runs at awaits as before.
 *
 * Node built-ins are reached through `process.getBuiltinModule` (no import statement), so
 * browser bundles stay free of them.
 */

type GcFn = () => void;
type CleanupSome = { cleanupSome?: () => void };

interface Host {
  gc: GcFn | null;
  Registry: typeof FinalizationRegistry;
  /** True when registries made here can be finalized synchronously after gc(). */
  sync: boolean;
}

interface NodeProcess {
  getBuiltinModule?: (id: string) => unknown;
}

let host: Host | null = null;

function probe(): Host {
  const globalGc = (globalThis as { gc?: unknown }).gc;
  const fallback: Host = {
    gc: typeof globalGc === 'function' ? (globalGc as GcFn) : null,
    Registry: FinalizationRegistry,
    sync: false,
  };
  const proc = (globalThis as { process?: NodeProcess }).process;
  const load = proc?.getBuiltinModule;
  if (typeof load !== 'function') return fallback;
  try {
    const v8 = load.call(proc, 'node:v8') as { setFlagsFromString(f: string): void };
    const vm = load.call(proc, 'node:vm') as {
      createContext(o: object): object;
      runInContext(code: string, ctx: object): unknown;
    };
    v8.setFlagsFromString('--expose-gc');
    v8.setFlagsFromString('--harmony-weak-refs-with-cleanup-some');
    const ctx = vm.createContext({});
    const gc = vm.runInContext('gc', ctx);
    const Registry = vm.runInContext('FinalizationRegistry', ctx) as typeof FinalizationRegistry;
    const hasGc = typeof gc === 'function';
    const sync = hasGc && typeof (Registry.prototype as CleanupSome).cleanupSome === 'function';
    return { gc: hasGc ? (gc as GcFn) : fallback.gc, Registry: sync ? Registry : FinalizationRegistry, sync };
  } catch {
    return fallback;
  }
}

function theHost(): Host {
  return (host ??= probe());
}

const syncRegistries: CleanupSome[] = [];

/** The host's synchronous full collection, or null where none can be had (browsers). */
export function hostGc(): GcFn | null {
  return theHost().gc;
}

/** A FinalizationRegistry that collectSync() can finalize without a task, where the host allows it. */
export function newFinalizationRegistry<H>(cleanup: (held: H) => void): FinalizationRegistry<H> {
  const h = theHost();
  const r = new h.Registry<H>(cleanup);
  if (h.sync) syncRegistries.push(r as unknown as CleanupSome);
  return r;
}

/** Whether collectSync() can free dropped objects here. */
export function canCollectSync(): boolean {
  return theHost().sync;
}

/**
 * A full collection, then the callbacks of every registry made by newFinalizationRegistry for
 * the objects it found dead, before returning. False (nothing done) where the host cannot.
 * Callers flush deferred registrations first (deferred-registry.ts), so nothing waits a cycle.
 */
export function collectSync(): boolean {
  const h = theHost();
  if (!h.sync || !h.gc) return false;
  h.gc();
  for (const r of syncRegistries) r.cleanupSome!();
  return true;
}
