/**
 * One WebAssembly linear memory shared by the CPU backend's kernels (the matmul and the
 * elementwise loops), so a matmul's epilogue can run on the product where it lies. Memory
 * grows on demand and never shrinks; growing detaches the old buffer, so views are taken
 * through `f32`, which re-creates its view after any kernel grew the memory.
 */
export class Arena {
  readonly memory = new WebAssembly.Memory({ initial: 1 });
  private view = new Float32Array(this.memory.buffer);

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
