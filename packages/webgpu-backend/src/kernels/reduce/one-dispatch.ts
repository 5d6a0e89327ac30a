import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';

/**
 * Scratch of the kernels that finish a reduction in the dispatch that makes its partials (the
 * one-dispatch reductions, cross-entropy's total), one per runtime, kept between dispatches:
 * per output an arrival counter (left at 0), then the partial slots (left at SENTINEL). The
 * workgroup that arrives last folds the slots in slot order, so the result does not depend on
 * which one was last. Dispatches that bind it run one after another (queue order), and each
 * leaves it as it found it.
 */
export const MAX_ONE_OUTPUTS = 1024;
export const MAX_ONE_SLOTS = 16384;
/** A signalling NaN: float arithmetic never produces one, so a written partial differs from it. */
export const SENTINEL = 0x7fa5a5a5;
const scratches = new WeakMap<Runtime, PooledBuffer>();

export function oneDispatchScratch(rt: Runtime): PooledBuffer {
  let b = scratches.get(rt);
  if (!b) {
    const words = new Uint32Array(MAX_ONE_OUTPUTS + MAX_ONE_SLOTS);
    words.fill(SENTINEL, MAX_ONE_OUTPUTS);
    const buffer = rt.device.createBuffer({
      size: words.byteLength,
      usage: 0x80 | 0x08 /* STORAGE | COPY_DST */,
      label: 'surf reduce scratch',
    });
    rt.device.queue.writeBuffer(buffer, 0, words.buffer, 0, words.byteLength);
    // Pool ids are positive; the bind-group cache is per runtime, so one fixed id is enough.
    b = { buffer, bytes: words.byteLength, id: -1, lastBatch: -1 };
    scratches.set(rt, b);
  }
  return b;
}

/**
 * WGSL that reads slot `idx` of `sc` once it no longer holds the sentinel and puts the
 * sentinel back, into `u32` variable `b`. WGSL has no device-wide fence, so a partial's store
 * may become visible after the arrival counter: the slot is read until it changes (a single
 * location is coherent), capped so a broken invariant cannot hang the GPU. A partial equal to
 * the sentinel would be a NaN, which the fold turns into NaN anyway.
 */
export function takeSlot(idx: string): string {
  return `var b = atomicLoad(&sc[${idx}]);
    for (var spin = 0u; b == ${SENTINEL}u && spin < 65536u; spin++) { b = atomicLoad(&sc[${idx}]); }
    atomicStore(&sc[${idx}], ${SENTINEL}u);`;
}
