import { ValueError } from '@surf/core';
import type { PooledBuffer } from './pool';

/** Where a device-side check sits: the op, the operand's name, and the range it must lie in. */
export interface CheckSite {
  op: string;
  name: string;
  /** How the message names the range, e.g. "the class range [0, 10) of the input's 10 columns". */
  range: string;
}

const SLOTS = 64;
const SLOT_BYTES = 16;

/**
 * The backend's error flag, as CUDA's device-side asserts: kernels with checks (kernels/index/index-check.ts)
 * write a failure into their site's slot instead of stopping, and the next readback or sync()
 * copies the slots in use into its own mapped buffer (16 bytes a site, in the same submission:
 * no extra round trip) and raises the first failure as a ValueError naming the op
 * and the range. The flag is armed only while checks have run since the last drain, so work
 * without checks reads nothing extra.
 */
export class DeviceFlag {
  private buf: PooledBuffer | null = null;
  private sites: CheckSite[] = [];
  private slotOf = new Map<string, number>();
  /** A check was queued since the last drain. */
  armed = false;

  constructor(private readonly device: GPUDevice) {}

  /** The flag buffer (made on first use) and the slot for `site`; arms the flag. */
  use(site: CheckSite): { buf: PooledBuffer; slot: number } {
    const key = `${site.op}\u0000${site.name}\u0000${site.range}`;
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      // Past 64 distinct sites they share slots; a failure then names every site of its slot.
      slot = this.sites.length % SLOTS;
      this.slotOf.set(key, slot);
      this.sites.push(site);
    }
    this.buf ??= {
      buffer: this.device.createBuffer({
        size: SLOTS * SLOT_BYTES,
        usage: 0x80 /* STORAGE */ | 0x04 /* COPY_SRC */ | 0x08 /* COPY_DST */,
        label: 'surf error flag',
      }),
      bytes: SLOTS * SLOT_BYTES,
      id: -1, // never a pool id: its bind groups are keyed apart
      lastBatch: -1,
    };
    this.armed = true;
    return { buf: this.buf, slot };
  }

  /** The flag's buffer (only while armed, so it exists). */
  get buffer(): GPUBuffer {
    return this.buf!.buffer;
  }

  /** Bytes a drain copies: the slots in use. */
  get bytes(): number {
    return Math.min(this.sites.length, SLOTS) * SLOT_BYTES;
  }

  /**
   * Records the copy of the slots into `dst` at `offset`; disarms. Slots stay zero until a
   * check fails, so they need a reset only after a failure (reset(), when it is reported):
   * the common drain is one copy, not a copy and a clear.
   */
  encodeDrain(encoder: GPUCommandEncoder, dst: GPUBuffer, offset: number): void {
    encoder.copyBufferToBuffer(this.buf!.buffer, 0, dst, offset, this.bytes);
    this.armed = false;
  }

  /** Zeroes the slots after a failure was drained (queued before any later submission). */
  reset(queue: GPUQueue): void {
    if (this.buf) queue.writeBuffer(this.buf.buffer, 0, new Uint8Array(SLOTS * SLOT_BYTES));
  }

  /** The ValueError for the first failed slot in `words` (as drained), or null. */
  decode(words: Uint32Array): ValueError | null {
    for (let slot = 0; slot * 4 < words.length; slot++) {
      const w = words.subarray(slot * 4, slot * 4 + 4);
      if (w[0] === 0) continue;
      const at = ~w[1] >>> 0;
      const hi = (w[2] ^ 0x80000000) | 0;
      const lo = (~w[3] ^ 0x80000000) | 0;
      const sites = this.sites.filter((_, i) => i % SLOTS === slot);
      const s = sites[0];
      const where = sites.length > 1 ? ` (one of the checks of ${sites.map((x) => x.op).join(', ')})` : '';
      const what =
        lo === hi
          ? `${s.name}[${at}] = ${lo} is outside ${s.range}`
          : `${s.name}[${at}] is outside ${s.range} (the bad values seen run from ${lo} to ${hi})`;
      return new ValueError(
        `${s.op}: ${what}${where}; found by a device-side check at the next readback or sync() after the op`,
      );
    }
    return null;
  }

  destroy(): void {
    this.buf?.buffer.destroy();
    this.buf = null;
  }
}
