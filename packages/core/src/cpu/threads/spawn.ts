import { nodeBuiltin } from '../node-builtin';
import { WORKER_SOURCE } from './worker-source';

/**
 * Starting worker threads without naming Node built-ins where a bundler would see them (the
 * browser bundle must not pull them in): Node's modules are reached through
 * `process.getBuiltinModule` or a `require` alias at run time, as node-gpu.ts does.
 */

/** What the pool needs of a Node Worker or a browser Worker. */
export interface WorkerHandle {
  post(msg: unknown): void;
  terminate(): void;
}

interface NodeWorker {
  postMessage(msg: unknown): void;
  terminate(): unknown;
  unref(): void;
  on(ev: 'error', fn: (e: unknown) => void): void;
}
type NodeWorkerCtor = new (src: string, opts: { eval: boolean }) => NodeWorker;

const isNode = () =>
  typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';

/**
 * Whether this thread may block in Atomics.wait, which the synchronous backend needs to wait
 * for its workers: any thread in Node, only worker threads in a browser.
 */
export function canBlock(): boolean {
  if (isNode()) return true;
  const g = globalThis as { WorkerGlobalScope?: new () => unknown };
  return typeof g.WorkerGlobalScope === 'function' && globalThis instanceof g.WorkerGlobalScope;
}

/** Logical cores, or 1 when unknown. */
export function coreCount(): number {
  const os = nodeBuiltin<{ availableParallelism?: () => number; cpus(): unknown[] }>('node:os');
  if (os) return os.availableParallelism?.() ?? os.cpus().length ?? 1;
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  return nav?.hardwareConcurrency ?? 1;
}

/**
 * Starts one worker running WORKER_SOURCE; null when the engine has no workers. Node workers
 * are unref'd: an idle pool never keeps the process alive.
 */
export function spawnWorker(onError: (e: unknown) => void): WorkerHandle | null {
  if (isNode()) {
    const wt = nodeBuiltin<{ Worker: NodeWorkerCtor }>('node:worker_threads');
    if (!wt) return null;
    const w = new wt.Worker(WORKER_SOURCE, { eval: true });
    w.unref();
    w.on('error', onError);
    return { post: (m) => w.postMessage(m), terminate: () => void w.terminate() };
  }
  const g = globalThis as {
    Worker?: new (url: string) => { postMessage(m: unknown): void; terminate(): void; onerror: unknown };
    Blob?: typeof Blob;
    URL?: typeof URL;
  };
  if (typeof g.Worker !== 'function' || typeof g.Blob !== 'function' || !g.URL) return null;
  // One URL for every worker, kept: revoking it could race the worker's own fetch.
  blobUrl ??= g.URL.createObjectURL(new g.Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const w = new g.Worker(blobUrl);
  w.onerror = onError;
  return { post: (m) => w.postMessage(m), terminate: () => w.terminate() };
}

let blobUrl: string | undefined;
