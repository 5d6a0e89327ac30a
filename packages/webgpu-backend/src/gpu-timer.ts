/**
 * GPU time of every compute pass, from timestamp queries (the optional `timestamp-query`
 * feature). Each pass of a batch writes a begin and an end timestamp into one query set; at
 * submit the used pairs are resolved and copied to a mappable buffer in the same command
 * buffer, and summed when that buffer maps. Host clocks cannot see this: a submit returns
 * before the GPU starts, and a sync measures GPU time plus every gap the host left.
 *
 * Off unless asked for (`timestamps: true`): the resolve and the extra map cost a little per
 * submit, which is fine for profiling a step and wrong for the default path.
 */
export class GpuTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolveBuf: GPUBuffer;
  private free: GPUBuffer[] = [];
  private inFlight = new Set<Promise<void>>();
  private used = 0;
  /** GPU nanoseconds summed over every pass resolved so far. */
  totalNs = 0;
  /** Passes timed so far (a pass past the query set's capacity in one batch is not timed). */
  passes = 0;
  /** Passes that could not be timed because their batch ran out of query pairs. */
  untimed = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly pairs = 512,
  ) {
    this.querySet = device.createQuerySet({ type: 'timestamp', count: pairs * 2, label: 'surf timestamps' });
    this.resolveBuf = device.createBuffer({
      size: pairs * 16,
      usage: 0x0200 /* QUERY_RESOLVE */ | 0x04 /* COPY_SRC */,
      label: 'surf timestamps resolve',
    });
  }

  /** The timestampWrites for the next compute pass of the open batch (undefined when full). */
  passWrites(): GPUComputePassTimestampWrites | undefined {
    if (this.used >= this.pairs) {
      this.untimed++;
      return undefined;
    }
    const i = this.used++;
    return { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
  }

  /**
   * Records the resolve of this batch's pairs into `encoder` (call before finish()); returns
   * the callback to run once the command buffer is submitted, or null when no pass was timed.
   */
  resolve(encoder: GPUCommandEncoder): (() => void) | null {
    const n = this.used;
    if (n === 0) return null;
    this.used = 0;
    const bytes = n * 16;
    const read =
      this.free.pop() ??
      this.device.createBuffer({
        size: this.pairs * 16,
        usage: 0x01 /* MAP_READ */ | 0x08 /* COPY_DST */,
        label: 'surf timestamps read',
      });
    encoder.resolveQuerySet(this.querySet, 0, n * 2, this.resolveBuf, 0);
    encoder.copyBufferToBuffer(this.resolveBuf, 0, read, 0, bytes);
    return () => {
      const p = read.mapAsync(1 /* READ */, 0, bytes).then(
        () => {
          const t = new BigUint64Array(read.getMappedRange(0, bytes));
          for (let j = 0; j < n; j++) {
            const d = t[2 * j + 1] - t[2 * j];
            // A pass whose end precedes its begin (a clock reset) is skipped, not counted as huge.
            if (t[2 * j + 1] >= t[2 * j]) this.totalNs += Number(d);
          }
          this.passes += n;
          read.unmap();
          this.free.push(read);
        },
        () => read.destroy(),
      );
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    };
  }

  /** Resolves once every submitted batch's timestamps are summed. */
  async settle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolveBuf.destroy();
    for (const b of this.free) b.destroy();
    this.free = [];
  }
}
