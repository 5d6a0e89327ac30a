import type { Backend } from '@surf/core';
import { ValueError, canCollectSync, collectSync, flushDeferredRegistrations, hostGc, parseOptions } from '@surf/core';
import { getBackend } from '../context';
import { nextTask } from './collector';

/**
 * Bounded memory for eager loops written without tidy()/dispose() (the loop
 * PyTorch users write). A tensor nobody disposed is freed when V8 collects it (the
 * FinalizationRegistry in core's NDArray releases its storage), but V8 neither sees GPU
 * buffers nor runs finalizers inside a chain of resolved awaits, so such a loop grows.
 *
 * The policy, at every await on tensor data (data(), item(), toArray(): where a loop waits
 * anyway): when the backend's live bytes are past a limit (about twice what was live after
 * the last collection, and at least `minGrowthBytes` more), run a full collection and yield
 * to tasks so the finalizers release what was dropped. The collection runs while the
 * readback is in flight. Like V8's own heap limit, the limit follows the live set, so a
 * program that really holds more memory is not collected over and over. tidy() and dispose()
 * stay exact and cost nothing here: they keep live bytes from growing, so no collection is due.
 */
export interface MemoryOptions {
  /** Collect at awaits when live bytes grew (default true; a no-op where no gc() exists). */
  autoCollect?: boolean;
  /** The least growth over the live bytes after a collection that triggers the next one (default 4 MiB). */
  minGrowthBytes?: number;
  /** Warn once when this many tensors are alive at the same time (default 50,000; 0: never). */
  warnTensors?: number;
}

const options: Required<MemoryOptions> = { autoCollect: true, minGrowthBytes: 4 << 20, warnTensors: 50_000 };

// The live bytes above which an await collects, per backend (see settle()).
let limits = new WeakMap<Backend, number>();
let collections = 0;
let warned = false;

/** Sets the memory policy for eager loops; returns the options now in force. */
export function configureMemory(opts: MemoryOptions = {}): Required<MemoryOptions> {
  opts = parseOptions<MemoryOptions>('configureMemory', opts, {
    autoCollect: 'boolean',
    minGrowthBytes: 'any',
    warnTensors: 'any',
  });
  const num = (k: 'minGrowthBytes' | 'warnTensors'): void => {
    const v = opts[k];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new ValueError(`configureMemory: ${k} must be a number >= 0; got ${JSON.stringify(v)}`);
    options[k] = v;
  };
  num('minGrowthBytes');
  if (opts.minGrowthBytes !== undefined) limits = new WeakMap();
  num('warnTensors');
  if (opts.autoCollect !== undefined) {
    if (typeof opts.autoCollect !== 'boolean')
      throw new ValueError(`configureMemory: autoCollect must be a boolean; got ${JSON.stringify(opts.autoCollect)}`);
    options.autoCollect = opts.autoCollect;
  }
  return { ...options };
}

/** How many automatic or requested collections ran (tests and the soak report it). */
export function collectionCount(): number {
  return collections;
}

/**
 * Collects now: a full garbage collection, then tasks until the finalizers ran. Resolves
 * without collecting where the host exposes no collector (browsers: their collector runs on
 * its own). For tests and for loops that want memory back at a point of their choosing.
 */
export function collectGarbage(backend: Backend = getBackend()): Promise<void> {
  // Concurrent awaits share one collection.
  if (!inFlight)
    inFlight = runCollection(backend).finally(() => {
      inFlight = null;
    });
  return inFlight.then(() => settle(backend));
}

/**
 * Sets the limit from the live bytes after a collection: twice the live set (at least the
 * live set plus minGrowthBytes), as V8 sizes its heap. It then stays put while the live set
 * stays under 60% of it, so a steady loop collects at the same peak every time (its memory
 * is flat from period to period); a live set that grew past that (the program holds more)
 * or shrank under an eighth of it moves the limit.
 */
function settle(backend: Backend): void {
  const live = backend.memory().bytes;
  const limit = limits.get(backend);
  if (limit === undefined || live > 0.6 * limit || live < limit / 8)
    limits.set(backend, live + Math.max(live, options.minGrowthBytes));
}

let inFlight: Promise<void> | null = null;

/**
 * V8 runs the finalizers of one FinalizationRegistry per task (and autograd's tensor count
 * and core's storages are two registries), so one task is not enough: yield a few, and on
 * while the backend keeps releasing bytes.
 */
async function runCollection(backend: Backend): Promise<void> {
  const gc = hostGc();
  if (!gc) return;
  // Arrays and tensors of this job are still waiting to be registered (held until then).
  flushDeferredRegistrations();
  if (collectSync()) {
    collections++;
    return;
  }
  gc();
  collections++;
  let bytes = backend.memory().bytes;
  // At least three tasks; then until the live bytes stayed put for two tasks in a row.
  for (let i = 0, still = 0; i < 10 && (i < 3 || still < 2); i++) {
    await nextTask();
    const now = backend.memory().bytes;
    still = now === bytes ? still + 1 : 0;
    bytes = now;
  }
}

/** Called at each await on tensor data; collects when live bytes grew past the threshold. */
export function collectIfDue(backend: Backend): Promise<void> | null {
  if (!options.autoCollect) return null;
  const bytes = backend.memory().bytes;
  if (bytes <= (limits.get(backend) ?? options.minGrowthBytes) || !hostGc()) return null;
  return collectGarbage(backend);
}

/**
 * A readback with the collection (when due) running while it is in flight. Both promises get
 * handlers at once, so a failed read is never reported as unhandled while we collect.
 */
export async function readAndCollect<T>(backend: Backend, read: Promise<T>): Promise<T> {
  const c = collectIfDue(backend);
  if (!c) return read;
  return (await Promise.all([read, c]))[0];
}

/** Called when a tensor is created, with the number now alive: the one-time pile-up warning. */
export function noteLiveTensors(live: number): void {
  if (warned || options.warnTensors === 0 || live < options.warnTensors) return;
  warned = true;
  console.warn(
    `surf: ${live} tensors are alive at once. Tensors that are not disposed are freed by the garbage collector, ` +
      'which Surf runs at awaits on tensor data (item(), data(), toArray()); a loop that holds its tensors (a list of losses: ' +
      'keep the numbers from item() instead), or never awaits, keeps them. Wrap steps in tidy() or dispose() tensors to free them at once. ' +
      '(This warning is shown once; configureMemory({ warnTensors }) changes its threshold.)',
  );
}

// The collections of loops that never await: when and what the last one cost.
let lastSyncEnd = -Infinity;
let lastSyncMs = 0;
let checks = 0;
let inSync = false;

/**
 * Called as tensors are made (every 16th): where the host finalizes synchronously, a loop that
 * never awaits is collected when live bytes pass the limit, as at awaits. A full collection
 * costs milliseconds, so at most about a tenth of the time goes to them: after one that took
 * g ms the next waits 9g ms, unless live bytes pass eight times the limit (bounded memory
 * wins over speed there).
 */
export function collectIfDueSync(): void {
  if ((++checks & 15) !== 0 || !options.autoCollect || !canCollectSync()) return;
  const backend = getBackend();
  const bytes = backend.memory().bytes;
  const limit = limits.get(backend) ?? options.minGrowthBytes;
  if (bytes <= limit || inSync) return;
  const start = performance.now();
  if (start - lastSyncEnd < 9 * lastSyncMs && bytes <= 8 * limit) return;
  inSync = true;
  try {
    flushDeferredRegistrations();
    collectSync();
    collections++;
  } finally {
    inSync = false;
  }
  lastSyncEnd = performance.now();
  lastSyncMs = lastSyncEnd - start;
  settle(backend);
}
