import { MAX_PAGES, canShareMemory } from './shared-memory';

/**
 * One WebAssembly linear memory shared by the CPU backend's kernels (the matmul and the
 * elementwise loops), so a matmul's epilogue can run on the product where it lies. Memory
 * grows on demand and never shrinks; growing detaches the old buffer (or, for a shared
 * memory, leaves the old one at its old length), so views are taken through `f32`, which
 * re-creates its view after any kernel grew the memory. Where the engine allows it the
 * memory is shared, so worker threads (`../threads`) can run kernels on it too.
 */
export class Arena {
  readonly memory: WebAssembly.Memory;
  private view: Float32Array;

  constructor(readonly shared = canShareMemory()) {
    this.memory = new WebAssembly.Memory(shared ? { initial: 1, maximum: MAX_PAGES, shared: true } : { initial: 1 });
    this.view = new Float32Array(this.memory.buffer);
  }

  get f32(): Float32Array {
    if (this.view.buffer !== this.memory.buffer) this.view = new Float32Array(this.memory.buffer);
    return this.view;
  }

  /** Grows the memory to hold `bytes`; false when the engine refuses (wasm32 stops at 4 GiB). */
  ensure(bytes: number): boolean {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return true;
    if (bytes > 2 ** 32 - 65536) return false;
    try {
      this.memory.grow(Math.ceil((bytes - have) / 65536));
    } catch {
      return false;
    }
    return true;
  }
}

let shared: Arena | undefined;

/** The arena the backend's default kernels share. */
export function sharedArena(): Arena {
  if (!shared) shared = new Arena();
  return shared;
}
