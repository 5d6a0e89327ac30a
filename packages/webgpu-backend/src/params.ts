/**
 * Kernel parameters for a whole command batch live in one host arena that is uploaded with a
 * single writeBuffer right before the batch is submitted; each dispatch binds its block of
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
  /** Bytes used in the open batch. */
  used = 0;

  constructor(device: GPUDevice, readonly capacity: number, readonly align: number) {
    const host = new ArrayBuffer(capacity);
    this.u32 = new Uint32Array(host);
    this.i32 = new Int32Array(host);
    this.f32 = new Float32Array(host);
    this.gpu = device.createBuffer({ size: capacity, usage: 0x40 /* UNIFORM */ | 0x08 /* COPY_DST */, label: 'surf params arena' });
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

  upload(queue: GPUQueue): void {
    if (this.used > 0) queue.writeBuffer(this.gpu, 0, this.u32.buffer, 0, this.used);
    this.used = 0;
  }
}
