import type { Kernel, Runtime, RuntimeCapture } from '../runtime';
import type { PooledBuffer } from '../pool';

/** One thing a captured step does on the GPU, in stream order. */
export type CapturedOp =
  | {
      readonly k: 'dispatch';
      readonly kernel: Kernel;
      readonly bufs: readonly PooledBuffer[];
      readonly params: Uint32Array;
      readonly x: number;
      readonly y: number;
    }
  | { readonly k: 'upload'; readonly buf: PooledBuffer; readonly src: ArrayBufferView; readonly bytes: Uint8Array };

/** A capture that cannot become a program (the step does something the program cannot redo). */
export class CaptureMismatch extends Error {}

/**
 * Watches one dry run of a recorded step (Runtime.capture): dispatches with a copy of their
 * parameter words, uploads with their bytes, and the buffers the step allocates. Buffers the
 * step frees go to a free list of its own, not to the pool, so the step reuses them as eagerly
 * (the same buffer in several roles, in stream order) and they stay the program's afterwards.
 * A second dry run passes the first one's allocations as `forced`: it gets the very same
 * buffers in the same order, so the two runs can be compared op by op.
 */
export class StepCapture implements RuntimeCapture {
  readonly ops: CapturedOp[] = [];
  /** Every buffer handed out, in order (repeats where a freed one was reused). */
  readonly allocs: PooledBuffer[] = [];
  /** Buffers freed here that the step did not allocate (given back to the pool afterwards). */
  readonly foreign: PooledBuffer[] = [];
  private free = new Map<number, PooledBuffer[]>();
  private mine = new Set<PooledBuffer>();
  /**
   * Buffers an upload filled. Once freed they are not reused within the step, so a static
   * upload's buffer holds its bytes from one run to the next (the program then copies them
   * on its first runs only).
   */
  private uploaded = new Set<PooledBuffer>();

  constructor(
    private readonly rt: Runtime,
    private readonly forced: readonly PooledBuffer[] | null,
  ) {}

  dispatch(kernel: Kernel, bufs: readonly PooledBuffer[], params: Uint32Array, x: number, y: number): void {
    this.ops.push({ k: 'dispatch', kernel, bufs: bufs.slice(), params, x, y });
  }

  upload(buf: PooledBuffer, src: ArrayBufferView): void {
    this.uploaded.add(buf);
    this.ops.push({
      k: 'upload',
      buf,
      src,
      bytes: new Uint8Array(src.buffer.slice(src.byteOffset, src.byteOffset + src.byteLength)),
    });
  }

  alloc(bytes: number, forUpload: boolean): PooledBuffer {
    const size = this.rt.pool.bucket(bytes);
    let b: PooledBuffer | undefined;
    if (this.forced) {
      b = this.forced[this.allocs.length];
      if (!b || b.bytes !== size) throw new CaptureMismatch('the step allocated differently on a second dry run');
    } else {
      b = this.free.get(size)?.pop() ?? this.rt.pool.acquire(bytes, this.rt.batch, forUpload);
      this.mine.add(b);
    }
    this.allocs.push(b);
    return b;
  }

  release(b: PooledBuffer): void {
    if (this.forced) return;
    if (!this.mine.has(b)) {
      this.foreign.push(b);
      return;
    }
    if (this.uploaded.has(b)) return;
    let l = this.free.get(b.bytes);
    if (!l) this.free.set(b.bytes, (l = []));
    l.push(b);
  }

  /** The distinct buffers this capture allocated (the program's). */
  owned(): Set<PooledBuffer> {
    return new Set(this.mine);
  }
}
