/**
 * A size-bucketed pool of GPU buffers. Allocating a GPUBuffer costs far more than an op, and
 * a training step frees and reallocates the same sizes every iteration, so freed buffers are
 * kept per bucket and handed out again. Buckets have four steps per power of two (at most
 * 25% slack), starting at 256 bytes. Past the byte limit the least recently released buffers
 * go first: a program whose sizes change (one model, then another; training, then a big
 * evaluation) would otherwise keep the old sizes forever and create and destroy a buffer on
 * every allocation of the new ones (measured: a max pool at 45 GB/s instead of
 * 1,127 after the matmul rows had filled the pool).
 *
 * A bucket hands out its free buffer with the lowest id, whatever order buffers came back in:
 * a loop then binds the same few buffers step after step and finds its bind groups cached. In
 * a loop without tidy, buffers come back whenever V8 collects; handing out the last one
 * released made every step bind new combinations (2-3 bind groups created per MLP step,
 * ~15 µs each on a GPU host), lowest id first none.
 *
 * Each buffer also remembers the op that last took it (its site), and a free buffer goes back
 * to its own site first; another site takes it only once it has sat free for SITE_HOLD
 * acquires. Without this, a loop without tidy whose V8 has not collected yet (the GPU host:
 * steps too fast for it) made a new buffer for its logits' gradient every step: the next
 * step's logits, which the loop drops but V8 still holds, took the gradient's freed buffer
 * first, and every kernel binding either was a new bind group (6 a step, 3 of them avoidable).
 * Only buffers up to SITE_MAX_BYTES are held for their site: there a new bind group costs more
 * than the kernels that bind it, and holding one costs little memory; a large buffer goes to
 * whichever op asks first, as before.
 *
 * The count of free buffers is bounded too, per bucket (BUCKET_MAX_FREE) and in all
 * (limitBuffers), so every release costs at most a bounded walk of one bucket. Unbounded, a
 * program that freed 200,000 tiny tensors (a file of empty tensors, loaded then disposed)
 * kept them all pooled, and each release walked its whole bucket to keep it sorted: quadratic,
 * 213 s. A full bucket keeps its lowest ids (those it hands out next) and destroys the highest.
 */
export const BUFFER_USAGE = 0x80 /* STORAGE */ | 0x04 /* COPY_SRC */ | 0x08; /* COPY_DST */

export interface PooledBuffer {
  readonly buffer: GPUBuffer;
  readonly bytes: number;
  readonly id: number;
  /** The command batch that last bound this buffer: queue.writeBuffer must not target it until that batch is submitted. */
  lastBatch: number;
  /**
   * jit: a compiled replay that lends this buffer to a tensor's storage (replay/program.ts).
   * Released by that storage, it goes back to the program instead of the pool.
   */
  lender?: { returned(b: PooledBuffer): void } | null;
  /** The op that last acquired this buffer (see the header). */
  site?: string;
  /** The pool's acquire count when this buffer was last released. */
  freedAt?: number;
}

/** Acquires a free buffer waits for its own site before another site may take it. */
export const SITE_HOLD = 256;
/** Free buffers a site-held acquire looks at, lowest ids first (a bucket can hold thousands after a collection). */
const SITE_SCAN = 64;
/** The largest bucket whose free buffers are held for their site. */
export const SITE_MAX_BYTES = 256 * 1024;
/** Free buffers one bucket keeps at most. */
export const BUCKET_MAX_FREE = 1024;
/** The most free bytes the pool keeps by following the peak of live bytes (followPeak). */
export const FOLLOW_MAX_BYTES = 4 * 2 ** 30;

/** Free buffers the pool keeps at most, all buckets together (the default of limitBuffers). */
export const POOL_MAX_FREE = 8192;

export function bucketBytes(bytes: number, cap: number): number {
  const b = Math.max(256, bytes);
  const step = 2 ** Math.max(0, Math.floor(Math.log2(b)) - 2);
  const r = Math.ceil(b / step) * step;
  // Near the binding limit the bucket must not overshoot it; 16-byte granularity keeps vec4 views legal.
  return Math.max(bytes, Math.min(r, Math.floor(cap / 16) * 16));
}

export class BufferPool {
  /** Free buffers per bucket size, by id from highest to lowest (the next one is last). */
  private free = new Map<number, PooledBuffer[]>();
  /** Pooled buffers, oldest release first (a Set keeps insertion order). */
  private order = new Set<PooledBuffer>();
  private nextId = 1;
  private acquires = 0;
  pooledBytes = 0;

  get pooledBuffers(): number {
    return this.order.size;
  }

  constructor(
    private device: GPUDevice,
    private cap: number,
    private limitBytes: number,
    private onDestroy: (b: PooledBuffer) => void,
    private limitBuffers = POOL_MAX_FREE,
  ) {}

  /**
   * The pool may keep as many free bytes as the program has held live at its peak (up to
   * `FOLLOW_MAX_BYTES`), never fewer than the configured limit: a loop whose live set rises
   * and falls each step (attention's [B, H, L, L] scores, a large batch's activations) then
   * finds every buffer it frees waiting for the next step, instead of destroying and
   * allocating hundreds of MiB per step. PyTorch's caching allocator keeps everything.
   */
  followPeak(peakLiveBytes: number): void {
    const want = Math.min(peakLiveBytes, FOLLOW_MAX_BYTES);
    if (want > this.limitBytes) this.limitBytes = want;
  }

  /** The size of the buffer acquire(bytes) hands out. */
  bucket(bytes: number): number {
    return bucketBytes(bytes, this.cap);
  }

  /**
   * A buffer of at least `bytes` for the op `site`: the lowest-id free one the site released,
   * else the lowest-id one free for SITE_HOLD acquires, else a new one (past SITE_MAX_BYTES:
   * the lowest-id free one). Upload buffers must not be in the open batch (see lastBatch).
   */
  acquire(bytes: number, openBatch: number, forUpload: boolean, site = ''): PooledBuffer {
    const size = bucketBytes(bytes, this.cap);
    const list = this.free.get(size);
    const now = ++this.acquires;
    const anySite = size > SITE_MAX_BYTES;
    if (list && list.length) {
      let pick = -1;
      let cold = -1;
      // Holding for sites looks at the lowest ids only; any site takes the first usable one.
      const stop = anySite ? 0 : Math.max(0, list.length - SITE_SCAN);
      for (let i = list.length - 1; i >= stop; i--) {
        const b = list[i];
        if (forUpload && b.lastBatch === openBatch) continue;
        if (anySite || b.site === site) {
          pick = i;
          break;
        }
        if (cold < 0 && now - (b.freedAt ?? 0) > SITE_HOLD) cold = i;
      }
      if (pick < 0) pick = cold;
      if (pick >= 0) {
        const b = list[pick];
        list.splice(pick, 1);
        this.order.delete(b);
        this.pooledBytes -= b.bytes;
        b.site = site;
        return b;
      }
    }
    const buffer = this.device.createBuffer({ size, usage: BUFFER_USAGE });
    return { buffer, bytes: size, id: this.nextId++, lastBatch: -1, site };
  }

  /**
   * Returns a buffer for reuse, or destroys it when the pool is full. A buffer the open batch
   * still binds (`lastBatch === openBatch`) is destroyed only after that batch is submitted
   * (`afterSubmit`): destroying it now makes the submit fail ("used in submit while destroyed"),
   * which happened on a large GPU with buffers larger than the pool's headroom.
   */
  release(b: PooledBuffer, openBatch = -1): void {
    if (b.bytes > this.limitBytes) {
      this.retire(b, openBatch);
      return;
    }
    let list = this.free.get(b.bytes);
    if (!list) this.free.set(b.bytes, (list = []));
    if (list.length >= BUCKET_MAX_FREE) {
      // A full bucket: the highest id goes (list[0]); when that is b itself, nothing is walked.
      if (list[0].id < b.id) {
        this.retire(b, openBatch);
        return;
      }
      this.evict(list[0], openBatch);
    }
    // Make room by dropping the buffers released longest ago, whatever their size.
    for (const old of this.order) {
      if (this.pooledBytes + b.bytes <= this.limitBytes && this.order.size < this.limitBuffers) break;
      this.evict(old, openBatch);
    }
    b.freedAt = this.acquires;
    // Kept sorted by id, descending: most releases land at the end (one more step of a loop).
    let at = list.length;
    while (at > 0 && list[at - 1].id < b.id) at--;
    list.splice(at, 0, b);
    this.order.add(b);
    this.pooledBytes += b.bytes;
  }

  /** Takes a free buffer out of the pool and retires it. */
  private evict(old: PooledBuffer, openBatch: number): void {
    const list = this.free.get(old.bytes)!;
    list.splice(list.indexOf(old), 1);
    this.order.delete(old);
    this.pooledBytes -= old.bytes;
    this.retire(old, openBatch);
  }

  /** Destroys a buffer now, or after the open batch's submit when that batch binds it. */
  private retire(b: PooledBuffer, openBatch: number): void {
    if (b.lastBatch === openBatch) this.doomed.push(b);
    else this.destroy(b);
  }

  /** Destroys the buffers whose release waited for their batch's submit. */
  afterSubmit(): void {
    for (const b of this.doomed) this.destroy(b);
    this.doomed.length = 0;
  }

  /** Destroys every pooled buffer (live ones are untouched). */
  trim(): void {
    for (const list of this.free.values()) for (const b of list) this.destroy(b);
    this.free.clear();
    this.order.clear();
    this.pooledBytes = 0;
  }

  private readonly doomed: PooledBuffer[] = [];

  private destroy(b: PooledBuffer): void {
    this.onDestroy(b);
    b.buffer.destroy();
  }
}
