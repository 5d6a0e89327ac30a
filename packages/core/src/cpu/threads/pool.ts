import { BackendError } from '../../errors';
import type { Arena } from '../wasm/arena';
import { CTRL } from './worker-source';
import { WorkerHandle, spawnWorker } from './spawn';

/** One call of an exported kernel function: its id in the pool and its i32 arguments. */
export type Call = readonly number[];

const align16 = (bytes: number) => (bytes + 15) & ~15;

/**
 * Worker threads sharing one arena's linear memory. The backend's API is synchronous, so a
 * job is: write each worker's call list into linear memory, bump the generation and wake the
 * workers (Atomics.notify), run the calling thread's own share, then wait (Atomics.wait)
 * until every worker counted itself done. Workers instantiate the same kernel modules on the
 * same memory (loaded on first use through the call list), so a kernel call means the same
 * thing on every thread.
 */
export class ThreadPool {
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(4 * CTRL.WORDS));
  private readonly workers: WorkerHandle[] = [];
  private readonly ids = new Map<WebAssembly.Module, number>();
  private failed: unknown = null;
  /** Jobs that ran on workers (tests and benchmarks check that threads were used). */
  jobs = 0;

  /** `size` workers besides the calling thread; `spin`: load polls before a worker sleeps. */
  constructor(readonly arena: Arena, readonly size: number, spin = 20000) {
    if (!arena.shared) throw new BackendError('cpu threads: the arena is not a shared memory');
    if (size > 64) throw new BackendError(`cpu threads: at most 65 threads, got ${size + 1}`);
    for (let i = 0; i < size; i++) {
      const w = spawnWorker((e) => { this.failed = e; });
      if (!w) { this.terminate(); throw new BackendError('cpu threads: this engine cannot start workers'); }
      w.post({ memory: arena.memory, ctrl: this.ctrl.buffer, index: i, spin });
      this.workers.push(w);
    }
  }

  /** Whether every worker has started (jobs before that run on the calling thread alone). */
  get ready(): boolean {
    return this.failed === null && this.workers.length === this.size && Atomics.load(this.ctrl, CTRL.READY) === this.size;
  }

  /** Resolves when every worker has started; rejects after `timeoutMs` or a worker error. */
  async whenReady(timeoutMs = 10000): Promise<void> {
    const t0 = Date.now();
    while (!this.ready) {
      if (this.failed !== null) throw new BackendError(`cpu threads: a worker failed to start: ${String(this.failed)}`);
      if (Date.now() - t0 > timeoutMs) throw new BackendError(`cpu threads: workers did not start within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /**
   * The id workers know `mod` by, loading it on every worker first if needed (its `bytes`
   * are written at byte `scratch` of linear memory, which must be free).
   */
  fnId(mod: WebAssembly.Module, bytes: Uint8Array, scratch: number): number {
    let id = this.ids.get(mod);
    if (id === undefined) {
      id = this.ids.size;
      const at = align16(scratch);
      const listAt = align16(at + bytes.length);
      if (!this.arena.ensure(listAt + 64)) throw new BackendError('cpu threads: no memory to load a kernel on the workers');
      new Uint8Array(this.arena.memory.buffer).set(bytes, at);
      const call = [-1, at, bytes.length, id];
      this.run(Array.from({ length: this.size }, () => [call]), listAt, () => {});
      this.ids.set(mod, id);
    }
    return id;
  }

  /**
   * Runs `lists[w]` on worker w (empty lists: that worker sits out) while the calling thread
   * runs `own`, and returns when all are done. The lists are written from byte `scratch` of
   * linear memory, which must not overlap anything a kernel reads or writes.
   */
  run(lists: readonly (readonly Call[])[], scratch: number, own: () => void): void {
    const words = lists.reduce((s, l) => s + 1 + l.reduce((t, c) => t + 1 + c.length, 0), 0);
    let at = align16(scratch);
    if (!this.arena.ensure(at + 4 * words)) throw new BackendError('cpu threads: no memory for the call lists');
    const m = new Int32Array(this.arena.memory.buffer);
    let busy = 0;
    for (let w = 0; w < this.size; w++) {
      const list = lists[w];
      if (!list || list.length === 0) { Atomics.store(this.ctrl, CTRL.LISTS + w, 0); continue; }
      busy++;
      Atomics.store(this.ctrl, CTRL.LISTS + w, at);
      let i = at >> 2;
      m[i++] = list.length;
      for (const c of list) {
        m[i++] = c[0];
        m[i++] = c.length - 1;
        for (let j = 1; j < c.length; j++) m[i++] = c[j];
      }
      at = i << 2;
    }
    Atomics.store(this.ctrl, CTRL.PENDING, busy);
    if (busy > 0) {
      this.jobs++;
      Atomics.add(this.ctrl, CTRL.GEN, 1);
      Atomics.notify(this.ctrl, CTRL.GEN);
    }
    let err: unknown = null;
    try {
      own();
    } catch (e) {
      err = e;
    }
    for (let p = Atomics.load(this.ctrl, CTRL.PENDING); p !== 0; p = Atomics.load(this.ctrl, CTRL.PENDING)) Atomics.wait(this.ctrl, CTRL.PENDING, p, 1000);
    if (err) throw err;
    if (Atomics.load(this.ctrl, CTRL.ERROR)) {
      let text = '';
      for (let i = CTRL.TEXT; this.ctrl[i] !== 0 && i < CTRL.TEXT + CTRL.TEXT_CHARS; i++) text += String.fromCharCode(this.ctrl[i]);
      Atomics.store(this.ctrl, CTRL.ERROR, 0);
      throw new BackendError(`cpu threads: a kernel failed on a worker thread: ${text}`);
    }
  }

  /** Stops the workers (they are unref'd in Node, so an idle pool never holds the process). */
  terminate(): void {
    Atomics.store(this.ctrl, CTRL.QUIT, 1);
    Atomics.add(this.ctrl, CTRL.GEN, 1);
    Atomics.notify(this.ctrl, CTRL.GEN);
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
  }
}
