import { DType, TypedArray, arrayFor } from '../dtype';
import type { Arena } from './wasm/arena';

/** Float32 arrays from this many elements live in the kernels' linear memory (when it can hold them). */
export const RESIDENT_MIN = 1024;

const DT_CODE: Record<DType, number> = { float32: 0, int32: 1, bool: 2 };

/**
 * Typed arrays of disposed CPU storages, kept by dtype and length for the next storage of the
 * same kind: a training step allocates the same shapes every step, and a fresh large typed
 * array costs an allocation that the OS zero-fills, page by page, plus garbage-collector work
 * to free it. Arrays handed out are not cleared: every kernel writes all of its output.
 * Small arrays (cheap to allocate) are not kept; the kept bytes are capped.
 *
 * With an `arena` (the kernels' shared linear memory), float32 arrays of RESIDENT_MIN
 * elements or more are blocks of it instead: the WebAssembly kernels then read and write them
 * where they lie, with no copy in or out, and worker threads see them too. Such blocks go
 * back to the arena, which recycles them by size. When the arena cannot grow (wasm32's
 * 4 GiB), arrays come from the JS heap as before.
 */
export class ArrayPool {
  private readonly free = new Map<number, TypedArray[]>();
  private bytes = 0;

  constructor(
    readonly maxBytes = 64 * 2 ** 20,
    readonly minElements = 256,
    readonly perSize = 8,
    readonly arena: Arena | null = null,
  ) {}

  /** An array of `size` elements, its contents unspecified (a reused one) or zero (a new one). */
  take(dtype: DType, size: number): TypedArray {
    if (this.arena && dtype === 'float32' && size >= RESIDENT_MIN) {
      const at = this.arena.alloc(4 * size);
      if (at) return this.arena.f32At(at, size);
    }
    if (size >= this.minElements) {
      const list = this.free.get(size * 3 + DT_CODE[dtype]);
      const a = list?.pop();
      if (a) {
        this.bytes -= a.byteLength;
        return a;
      }
    }
    return arrayFor(dtype, size);
  }

  /** Takes back an array nothing uses any more (from a disposed storage). */
  give(dtype: DType, a: TypedArray): void {
    const at = this.arena ? this.arena.addressOf(a) : -1;
    if (at >= 0) {
      this.arena!.release(at);
      return;
    }
    if (a.length < this.minElements || this.bytes + a.byteLength > this.maxBytes) return;
    const key = a.length * 3 + DT_CODE[dtype];
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    if (list.length >= this.perSize) return;
    list.push(a);
    this.bytes += a.byteLength;
  }

  /** Bytes held for reuse. */
  get heldBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.free.clear();
    this.bytes = 0;
  }
}
