/**
 * Whether this engine can give the CPU backend's linear memory to worker threads: a shared
 * WebAssembly.Memory (backed by a SharedArrayBuffer) exists in Node and, in browsers, only on
 * cross-origin-isolated pages. Modules must declare a shared memory import to link against
 * one, so the arena and every generated module read this same answer.
 */

/** Largest memory in 64 KiB pages (wasm32: 4 GiB). A shared memory must declare a maximum. */
export const MAX_PAGES = 65536;

let shareable: boolean | undefined;

export function canShareMemory(): boolean {
  if (shareable === undefined) {
    shareable = false;
    const g = globalThis as {
      SharedArrayBuffer?: unknown;
      crossOriginIsolated?: boolean;
      process?: { versions?: { node?: string } };
    };
    const node = typeof g.process?.versions?.node === 'string';
    if (typeof g.SharedArrayBuffer === 'function' && (node || g.crossOriginIsolated === true)) {
      try {
        // Reserving 4 GiB of address space can fail on 32-bit hosts: then no sharing.
        shareable =
          new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared: true }).buffer instanceof SharedArrayBuffer;
      } catch {
        shareable = false;
      }
    }
  }
  return shareable;
}
