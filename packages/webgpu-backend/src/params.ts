/**
 * Kernel parameters (and small uploads, see Runtime.upload) for a whole command batch live
 * in one host arena that is uploaded with a single writeBuffer right before the batch is
 * submitted; each dispatch binds its block of
 * the one GPU uniform buffer at a dynamic offset. So an op allocates no GPU object for its
 * parameters, and a pipeline serves every shape of its rank.
 *
 * Reusing the one GPU buffer for the next batch is safe: writeBuffer is ordered on the queue
 * after the previously submitted batch.
 */
export class ParamArena {
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  readonly gpu: GPUBuffer;
  private readonly bytes: Uint8Array;
  /** Bytes used in the open batch. */
  used = 0;

  constructor(
    device: GPUDevice,
    readonly capacity: number,
    readonly align: number,
  ) {
    const host = new ArrayBuffer(capacity);
    this.u32 = new Uint32Array(host);
    this.i32 = new Int32Array(host);
    this.f32 = new Float32Array(host);
    // COPY_SRC: small uploads are staged here too and copied out in the command stream.
    this.gpu = device.createBuffer({
      size: capacity,
      usage: 0x40 /* UNIFORM */ | 0x08 /* COPY_DST */ | 0x04 /* COPY_SRC */,
      label: 'surf params arena',
    });
    this.bytes = new Uint8Array(host);
  }

  fits(bytes: number): boolean {
    return this.used + bytes <= this.capacity;
  }

  /** Reserves a zeroed block; returns its byte offset (divide by 4 for the word index). */
  alloc(bytes: number): number {
    const off = this.used;
    this.used = off + Math.ceil(bytes / this.align) * this.align;
    this.u32.fill(0, off >> 2, (off + bytes) >> 2);
    return off;
  }

  /** Copies `data` into the arena (aligned as a parameter block); returns its byte offset. */
  stage(data: ArrayBufferView): number {
    const off = this.used;
    this.used = off + Math.ceil(data.byteLength / this.align) * this.align;
    this.bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), off);
    return off;
  }

  upload(queue: GPUQueue): void {
    if (this.used > 0) queue.writeBuffer(this.gpu, 0, this.u32.buffer, 0, this.used);
    this.used = 0;
  }
}
