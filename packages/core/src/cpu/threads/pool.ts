import { BackendError } from '../../errors';
import { wordAt } from '../wasm/address';
import { memoryLimitError } from '../wasm/memory-limit';
import type { Arena } from '../wasm/arena';
import { CTRL } from './worker-source';
import { WorkerHandle, spawnWorker } from './spawn';

/** One call of an exported kernel function: its id in the pool, then its i32 arguments. */
export type Call = readonly number[];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type KernelFn = (...args: any[]) => void;

const align16 = (bytes: number) => (bytes + 15) & ~15;

/**
 * Worker threads sharing one arena's linear memory. The backend's API is synchronous, so a
 * job is: write its chunks (lists of kernel calls) into linear memory, bump the generation
 * and wake the workers (Atomics.notify), claim and run chunks on the calling thread too,
 * then wait (Atomics.wait) until every chunk is done. Chunks are claimed one at a time from
 * a shared counter, so a thread that the OS holds back (a busy machine) gets fewer of them,
 * and a worker still asleep when the job ends is not waited for. Workers instantiate the
 * same kernel modules on the same memory (loaded on first use), so a call means the same
 * thing on every thread.
 */
export class ThreadPool {
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(4 * CTRL.WORDS));
  private readonly workers: WorkerHandle[] = [];
  private readonly ids = new Map<WebAssembly.Module, number>();
  private readonly local: KernelFn[] = [];
  private failed: unknown = null;
  private gen = 0;
  /** Jobs run with workers awake (tests and benchmarks check that threads were used). */
  jobs = 0;
  /** Whether the calling thread claims chunks too (tests turn it off to run all on workers). */
  callerClaims = true;
  /** Chunks a split job is cut into per thread: enough to even out a busy machine, few enough to keep panels long. */
  chunksPerThread = 3;

  /** `size` workers besides the calling thread; `spin`: polls of the generation before a worker sleeps. */
  constructor(
    readonly arena: Arena,
    readonly size: number,
    spin = 20000,
  ) {
    if (!arena.shared) throw new BackendError('cpu threads: the arena is not a shared memory');
    Atomics.store(this.ctrl, CTRL.NEXT, -1);
    for (let i = 0; i < size; i++) {
      const w = spawnWorker((e) => {
        this.failed = e;
      });
      if (!w) {
        this.terminate();
        throw new BackendError('cpu threads: this engine cannot start workers');
      }
      w.post({ memory: arena.memory, ctrl: this.ctrl.buffer, spin });
      this.workers.push(w);
    }
  }

  /** Whether every worker has started (jobs before that run on the calling thread alone). */
  get ready(): boolean {
    return (
      this.failed === null && this.workers.length === this.size && Atomics.load(this.ctrl, CTRL.READY) === this.size
    );
  }

  /** Resolves when every worker has started; rejects after `timeoutMs` or a worker error. */
  async whenReady(timeoutMs = 10000): Promise<void> {
    const t0 = Date.now();
    while (!this.ready) {
      if (this.failed !== null) throw new BackendError(`cpu threads: a worker failed to start: ${String(this.failed)}`);
      if (Date.now() - t0 > timeoutMs)
        throw new BackendError(`cpu threads: workers did not start within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  private wake(): void {
    this.gen = (this.gen + 1) | 0;
    Atomics.store(this.ctrl, CTRL.GEN, this.gen);
    Atomics.notify(this.ctrl, CTRL.GEN);
  }

  private checkError(): void {
    if (!Atomics.load(this.ctrl, CTRL.ERROR)) return;
    let text = '';
    for (let i = CTRL.TEXT; this.ctrl[i] !== 0 && i < CTRL.TEXT + CTRL.TEXT_CHARS; i++)
      text += String.fromCharCode(this.ctrl[i]);
    Atomics.store(this.ctrl, CTRL.ERROR, 0);
    throw new BackendError(`cpu threads: a kernel failed on a worker thread: ${text}`);
  }

  /**
   * The id `mod`'s exported function has in call lists, loading it on every worker first if
   * needed (its `bytes` go to byte `scratch` of linear memory, which must be free); `fn` is
   * the calling thread's instance of it.
   */
  fnId(mod: WebAssembly.Module, bytes: Uint8Array, scratch: number, fn: KernelFn): number {
    let id = this.ids.get(mod);
    if (id !== undefined) return id;
    id = this.ids.size;
    const at = align16(scratch);
    const desc = align16(at + bytes.length);
    if (!this.arena.ensure(desc + 16)) throw memoryLimitError(this.arena, 'loading a kernel on the worker threads');
    new Uint8Array(this.arena.memory.buffer).set(bytes, at);
    new Int32Array(this.arena.memory.buffer).set([at, bytes.length, id], wordAt(desc));
    Atomics.store(this.ctrl, CTRL.LOAD_AT, desc);
    Atomics.store(this.ctrl, CTRL.PENDING, this.size);
    Atomics.add(this.ctrl, CTRL.LOADS, 1);
    this.wake();
    // Every worker must have it before any job names it.
    for (let p = Atomics.load(this.ctrl, CTRL.PENDING); p !== 0; p = Atomics.load(this.ctrl, CTRL.PENDING))
      Atomics.wait(this.ctrl, CTRL.PENDING, p);
    this.checkError();
    this.ids.set(mod, id);
    this.local[id] = fn;
    return id;
  }

  /**
   * Runs every chunk (a list of calls) once, on whichever thread claims it, and returns when
   * all are done. The job is written from byte `scratch` of linear memory, which must not
   * overlap anything a kernel reads or writes.
   */
  run(chunks: readonly (readonly Call[])[], scratch: number): void {
    const n = chunks.length;
    if (n === 0) return;
    if (n > 0xffff) throw new BackendError(`cpu threads: ${n} chunks in one job (at most 65535)`);
    const words = n + 1 + chunks.reduce((s, l) => s + l.reduce((t, c) => t + 1 + c.length, 0), 0);
    const at = align16(scratch);
    if (!this.arena.ensure(at + 4 * words)) throw memoryLimitError(this.arena, 'a job for the worker threads');
    const m = new Int32Array(this.arena.memory.buffer);
    const j = wordAt(at);
    let i = j + n + 1;
    chunks.forEach((list, c) => {
      m[j + c] = i - j;
      for (const call of list) {
        m[i++] = call[0];
        m[i++] = call.length - 1;
        for (let a = 1; a < call.length; a++) m[i++] = call[a];
      }
    });
    m[j + n] = i - j;
    Atomics.store(this.ctrl, CTRL.JOB, at);
    Atomics.store(this.ctrl, CTRL.CHUNKS, n);
    Atomics.store(this.ctrl, CTRL.DONE, 0);
    const next = (this.gen + 1) | 0;
    Atomics.store(this.ctrl, CTRL.NEXT, (next & 0x7fff) << 16);
    this.jobs++;
    this.wake();
    // The calling thread claims chunks like any worker.
    let err: unknown = null;
    while (this.callerClaims) {
      const v = Atomics.load(this.ctrl, CTRL.NEXT);
      const c = v & 0xffff;
      if (c >= n) break;
      if (Atomics.compareExchange(this.ctrl, CTRL.NEXT, v, v + 1) !== v) continue;
      try {
        for (const call of chunks[c]) {
          const fn = this.local[call[0]];
          if (!fn) throw new BackendError(`cpu threads: no kernel with id ${call[0]} was loaded`);
          fn(...call.slice(1));
        }
      } catch (e) {
        err ??= e;
      }
      Atomics.add(this.ctrl, CTRL.DONE, 1);
    }
    // A short spin, then sleep: the last chunks are usually microseconds from done.
    for (let s = 0; s < 4000 && Atomics.load(this.ctrl, CTRL.DONE) < n; s++);
    for (let d = Atomics.load(this.ctrl, CTRL.DONE); d < n; d = Atomics.load(this.ctrl, CTRL.DONE))
      Atomics.wait(this.ctrl, CTRL.DONE, d);
    // Closed: a worker waking late finds nothing to claim.
    Atomics.store(this.ctrl, CTRL.NEXT, -1);
    if (err) {
      // A worker may have failed on another chunk of this job: clear its flag too, or the
      // next job would report this job's failure.
      Atomics.store(this.ctrl, CTRL.ERROR, 0);
      throw err;
    }
    this.checkError();
  }

  /** Stops the workers (they are unref'd in Node, so an idle pool never holds the process). */
  terminate(): void {
    Atomics.store(this.ctrl, CTRL.QUIT, 1);
    this.wake();
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
  }
}
