import { MAX_PAGES, canShareMemory } from './shared-memory';

/** First byte of the heap: address 0 stays unused, so an address is never falsy. */
const HEAP_START = 65536;
/** The largest linear memory: wasm32's 4 GiB of unsigned byte addresses, less one page. */
export const MEMORY_LIMIT = 2 ** 32 - 65536;
/** Blocks start on cache lines, so two threads writing neighbouring blocks share no line. */
const ALIGN = 64;
const alignUp = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN;

/**
 * One WebAssembly linear memory shared by the CPU backend's kernels (the matmul and the
 * elementwise loops), so a matmul's epilogue can run on the product where it lies. Memory
 * grows on demand and never shrinks; growing detaches the old buffer (or, for a shared
 * memory, leaves the old one at its old length), so views are taken through `f32`, which
 * re-creates its view after any kernel grew the memory. Where the engine allows it the
 * memory is shared, so worker threads (`../threads`) can run kernels on it too.
 *
 * It is also a heap: `alloc` hands out blocks that CPU storages live in (only on a shared
 * memory, whose growth leaves existing views valid), so kernels read and write them in place
 * instead of copying operands in and results out. Blocks are recycled by size (a training
 * step frees and asks for the same sizes every step); kernels' scratch lies above the
 * highest block (`scratch`), valid only during one kernel call.
 */
export class Arena {
  readonly memory: WebAssembly.Memory;
  private view: Float32Array;
  private top = HEAP_START;
  private readonly blockSize = new Map<number, number>();
  private readonly freeBySize = new Map<number, number[]>();
  /** Every buffer object this memory has shown (each growth of a shared memory makes a new one). */
  private readonly buffers = new WeakSet<ArrayBufferLike>();

  /**
   * `limitBytes`: the most linear memory to grow to (wasm32 addresses stop at 4 GiB; tests
   * inject a small limit to reach it cheaply).
   */
  constructor(
    readonly shared = canShareMemory(),
    readonly limitBytes = MEMORY_LIMIT,
  ) {
    this.memory = new WebAssembly.Memory(shared ? { initial: 1, maximum: MAX_PAGES, shared: true } : { initial: 1 });
    this.view = new Float32Array(this.memory.buffer);
    this.buffers.add(this.memory.buffer);
  }

  get f32(): Float32Array {
    if (this.view.buffer !== this.memory.buffer) {
      this.view = new Float32Array(this.memory.buffer);
      this.buffers.add(this.view.buffer);
    }
    return this.view;
  }

  /** Grows the memory to hold `bytes`; false when the engine refuses (wasm32 stops at 4 GiB). */
  ensure(bytes: number): boolean {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return true;
    if (bytes > this.limitBytes) return false;
    try {
      this.memory.grow(Math.ceil((bytes - have) / 65536));
    } catch {
      return false;
    }
    return true;
  }

  /** The first byte kernels may use as scratch (above every block; call `ensure` for the rest). */
  get scratch(): number {
    return this.top;
  }

  /** A block of at least `bytes` (16-byte aligned, contents unspecified), or 0 when memory cannot grow. */
  alloc(bytes: number): number {
    const size = alignUp(Math.max(bytes, 1));
    let at = this.freeBySize.get(size)?.pop();
    if (at === undefined) {
      // A freed block up to twice the size before growing: shapes that change slowly (a last
      // smaller batch) reuse memory instead of piling up new blocks.
      let best = 0;
      for (const [s, list] of this.freeBySize)
        if (s > size && s <= 2 * size && list.length > 0 && (best === 0 || s < best)) best = s;
      if (best) return this.take(this.freeBySize.get(best)!.pop()!, best);
      at = this.top;
      if (!this.ensure(at + size)) return 0;
      this.top = at + size;
    }
    return this.take(at, size);
  }

  private take(at: number, size: number): number {
    this.blockSize.set(at, size);
    return at;
  }

  /** Gives back a block from `alloc`; the topmost one lowers the top (more room for scratch). */
  release(at: number): void {
    const size = this.blockSize.get(at);
    if (size === undefined) throw new Error(`arena: no block at ${at}`);
    this.blockSize.delete(at);
    if (at + size === this.top) {
      this.top = at;
      return;
    }
    let list = this.freeBySize.get(size);
    if (!list) this.freeBySize.set(size, (list = []));
    list.push(at);
  }

  /** A Float32Array of `length` floats over the block at `at`. */
  f32At(at: number, length: number): Float32Array {
    return new Float32Array(this.f32.buffer, at, length);
  }

  /** The byte address of a typed array that lies in this memory, else -1. */
  addressOf(a: ArrayBufferView): number {
    return this.buffers.has(a.buffer) ? a.byteOffset : -1;
  }

  /** Bytes in blocks handed out and not given back. */
  get allocatedBytes(): number {
    let n = 0;
    for (const s of this.blockSize.values()) n += s;
    return n;
  }
}

let shared: Arena | undefined;

/** The arena the backend's default kernels share. */
export function sharedArena(): Arena {
  if (!shared) shared = new Arena();
  return shared;
}
