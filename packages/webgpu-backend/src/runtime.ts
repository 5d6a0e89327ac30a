import { BackendError, DeviceLostError, DisposedError, fmtShape } from '@surf/core';
import { ParamArena } from './params';
import { BindGroupCache } from './bind-groups';
import { BufferPool, PooledBuffer } from './pool';
import { paramBytes } from './kernels/wgsl';
import { ParamBlock, Program, Uniforms } from './kernels/program';
import type { GpuTimer } from './gpu-timer';
import { DeviceFlag } from './device-flag';

/** Uploads up to this size are copied in the command stream from the parameter arena. */
export const INLINE_UPLOAD_BYTES = 8192;

/** A compiled kernel: its pipeline and the parameter block size it binds. */
export interface Kernel {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  readonly layoutKey: string;
  /** Storage bindings the kernel only reads (1..reads), then those it writes. */
  readonly reads: number;
  readonly writes: number;
  readonly paramBytes: number;
  readonly name: string;
  readonly module: GPUShaderModule;
  /** The named parameter layout (kernels compiled from a Program; see program()). */
  readonly uniforms?: Uniforms;
}

/**
 * jit: while a runtime has a capture (replay/program.ts), ops are watched instead of encoded:
 * each dispatch, upload, allocation and release goes to the capture.
 */
export interface RuntimeCapture {
  dispatch(k: Kernel, bufs: readonly PooledBuffer[], params: Uint32Array, x: number, y: number): void;
  upload(b: PooledBuffer, data: ArrayBufferView): void;
  alloc(bytes: number, forUpload: boolean): PooledBuffer;
  release(b: PooledBuffer): void;
}

export interface RuntimeOptions {
  /** Dispatches recorded before the batch is submitted on its own. */
  opsPerSubmit: number;
  /** Bytes of the per-batch parameter arena. */
  paramArenaBytes: number;
  /** Pooled bytes kept for reuse before freed buffers are destroyed. */
  poolLimitBytes: number;
  /** Overrides maxComputeWorkgroupsPerDimension (tests use it to reach the 2-D grid cheaply). */
  maxWorkgroupsPerDim?: number;
  /** Times every compute pass on the GPU (timestamp queries; see gpu-timer.ts). */
  timer?: GpuTimer;
}

/**
 * Everything between the kernels and the device: pipeline and bind-group caches, the buffer
 * pool, the parameter arena, command batching, readback, and turning GPU errors into
 * SurfErrors. Ops record into one command encoder; a readback, sync, flush, a full arena or
 * `opsPerSubmit` dispatches submit it.
 */
export class Runtime {
  readonly pool: BufferPool;
  readonly maxPerDim: number;
  private arena: ParamArena;
  private pipelines = new Map<string, Kernel>();
  private layouts = new Map<string, { bgl: GPUBindGroupLayout; pl: GPUPipelineLayout }>();
  private bindGroups = new BindGroupCache();
  private staging = new Map<number, GPUBuffer[]>();
  /** Device-side checks' error flag, drained by every readback and sync(). */
  readonly flag: DeviceFlag;
  private stagingBytes = 0;
  private stagingCount = 0;

  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private passPipeline: GPUComputePipeline | null = null;
  private dispatches = 0;
  /** Running totals for `stats()`: what one training step costs in dispatches, submits and cache misses. */
  readonly counters = {
    dispatches: 0,
    submits: 0,
    bindGroupsCreated: 0,
    pipelinesCreated: 0,
    readbacks: 0,
    replays: 0,
  };
  /** Readbacks submitted whose data has not come back yet (jit submits a replay at once while one waits). */
  readsInFlight = 0;
  /** Id of the open batch (incremented on each submit). */
  batch = 0;
  private batchOpen = false;
  /** Ops recorded in the open batch, for error messages: [name, shape, name, shape, ...]. */
  private batchOps: unknown[] = [];
  private errorCheck: Promise<void> = Promise.resolve();
  private pendingError: Error | null = null;
  lostInfo: GPUDeviceLostInfo | null = null;
  /** jit: the compiled replay being captured, if any (see RuntimeCapture). */
  capture: RuntimeCapture | null = null;
  destroyed = false;
  private lostPromise: Promise<GPUDeviceLostInfo>;

  constructor(
    readonly device: GPUDevice,
    readonly opts: RuntimeOptions,
  ) {
    const lim = device.limits;
    this.maxPerDim = Math.min(
      opts.maxWorkgroupsPerDim ?? lim.maxComputeWorkgroupsPerDimension,
      lim.maxComputeWorkgroupsPerDimension,
    );
    this.flag = new DeviceFlag(device);
    this.pool = new BufferPool(
      device,
      Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize),
      opts.poolLimitBytes,
      () => this.bindGroups.clear(),
    );
    this.arena = new ParamArena(
      device,
      Math.min(opts.paramArenaBytes, lim.maxBufferSize),
      lim.minUniformBufferOffsetAlignment,
    );
    this.lostPromise = device.lost.then((info) => {
      this.lostInfo = info;
      return info;
    });
    device.addEventListener('uncapturederror', (ev) => {
      const e = (ev as GPUUncapturedErrorEvent).error;
      this.pendingError ??= new BackendError(`webgpu: GPU error outside any recorded op: ${e.message}`);
      ev.preventDefault();
    });
  }

  // state checks

  /** Throws if the backend cannot run `op` (destroyed, lost, or an earlier GPU error). */
  check(op: string): void {
    if (this.destroyed)
      throw new DisposedError(`${op}: the WebGPU backend was destroyed; create a new one with createWebGPUBackend()`);
    if (this.lostInfo) throw this.lostError(op);
    if (this.pendingError) {
      const e = this.pendingError;
      this.pendingError = null;
      throw e;
    }
  }

  private lostError(op: string): DeviceLostError {
    const i = this.lostInfo!;
    return new DeviceLostError(
      `${op}: the WebGPU device was lost (reason: ${i.reason}${i.message ? `: ${i.message.trim()}` : ''}); create a new backend with createWebGPUBackend()`,
    );
  }

  /** Records `op` for error messages and opens the batch's error scopes. */
  begin(name: string, shape: readonly number[]): void {
    if (!this.batchOpen) {
      this.device.pushErrorScope('internal');
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
      this.batchOpen = true;
    }
    this.batchOps.push(name, shape);
  }

  // kernels

  kernel(key: string, reads: number, writes: number, paramWords: number, gen: () => string): Kernel {
    let k = this.pipelines.get(key);
    if (k) return k;
    const layoutKey = `${reads}r${writes}w`;
    const lay = this.layoutOf(reads, writes, true);
    const name = key.length > 120 ? `${key.slice(0, 117)}...` : key;
    const module = this.device.createShaderModule({ code: gen(), label: name });
    const pipeline = this.device.createComputePipeline({
      layout: lay.pl,
      compute: { module, entryPoint: 'main' },
      label: name,
    });
    k = { pipeline, layout: lay.bgl, layoutKey, reads, writes, paramBytes: paramBytes(paramWords), name, module };
    this.counters.pipelinesCreated++;
    this.pipelines.set(key, k);
    return k;
  }

  /** Binding 0 is the parameter block (uniform), then `reads` read-only and `writes` read-write storage buffers. */
  private layoutOf(
    reads: number,
    writes: number,
    dynamic: boolean,
  ): { bgl: GPUBindGroupLayout; pl: GPUPipelineLayout } {
    const key = `${reads}r${writes}w${dynamic ? '' : '|fixed'}`;
    let lay = this.layouts.get(key);
    if (!lay) {
      const entries: GPUBindGroupLayoutEntry[] = [
        { binding: 0, visibility: 4 /* COMPUTE */, buffer: { type: 'uniform', hasDynamicOffset: dynamic } },
      ];
      for (let i = 0; i < reads + writes; i++) {
        entries.push({ binding: i + 1, visibility: 4, buffer: { type: i < reads ? 'read-only-storage' : 'storage' } });
      }
      const bgl = this.device.createBindGroupLayout({ entries, label: `surf ${key}` });
      lay = { bgl, pl: this.device.createPipelineLayout({ bindGroupLayouts: [bgl] }) };
      this.layouts.set(key, lay);
    }
    return lay;
  }

  /** By shader module: program() wraps kernel()'s object, and both share one fixed pipeline. */
  private fixed = new WeakMap<GPUShaderModule, { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }>();

  /**
   * jit: `k` on a layout that binds its parameter block at a fixed offset. A compiled replay's
   * blocks never move, and Dawn records setBindGroup ~1 µs faster without dynamic offsets
   *. Made once per kernel, on the kernel's module.
   */
  fixedKernel(k: Kernel): { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout } {
    let f = this.fixed.get(k.module);
    if (!f) {
      const lay = this.layoutOf(k.reads, k.writes, false);
      f = {
        pipeline: this.device.createComputePipeline({
          layout: lay.pl,
          compute: { module: k.module, entryPoint: 'main' },
          label: `${k.name} (fixed)`,
        }),
        layout: lay.bgl,
      };
      this.counters.pipelinesCreated++;
      this.fixed.set(k.module, f);
    }
    return f;
  }

  /** The pipeline of a program object (kernels/program.ts): layout and WGSL built once per key. */
  program(p: Program): Kernel & { uniforms: Uniforms } {
    const hit = this.pipelines.get(p.key);
    if (hit?.uniforms) return hit as Kernel & { uniforms: Uniforms };
    const u = p.uniforms();
    const k = { ...this.kernel(p.key, p.reads, p.writes, u.words, () => p.wgsl(u)), uniforms: u };
    this.pipelines.set(p.key, k);
    return k;
  }

  /** Reserves a zeroed parameter block for a program's kernel, written by name. */
  block(k: Kernel & { uniforms: Uniforms }): ParamBlock {
    return new ParamBlock(this.arena, this.params(k), k.uniforms);
  }

  get pipelineCount(): number {
    return this.pipelines.size;
  }

  /** Reserves a zeroed parameter block for `k`; returns its word index into the arena views. */
  params(k: Kernel): number {
    if (!this.arena.fits(k.paramBytes)) this.submit();
    return this.arena.alloc(k.paramBytes) >> 2;
  }

  get words(): { u32: Uint32Array; i32: Int32Array; f32: Float32Array } {
    return this.arena;
  }

  /** Records one dispatch of `k` over `groups` workgroups (folded into a 2-D grid when needed). */
  dispatch(k: Kernel, bufs: readonly PooledBuffer[], paramWord: number, groups: number): void {
    if (this.capture) {
      if (groups <= 0) return;
      const cy = groups <= this.maxPerDim ? 1 : Math.ceil(groups / this.maxPerDim);
      this.capture.dispatch(
        k,
        bufs,
        this.arena.u32.slice(paramWord, paramWord + (k.paramBytes >> 2)),
        cy === 1 ? groups : Math.ceil(groups / cy),
        cy,
      );
      return;
    }
    let bg = this.bindGroups.get(k.layout, k.paramBytes, bufs);
    if (!bg) {
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.arena.gpu, offset: 0, size: k.paramBytes } },
      ];
      bufs.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b.buffer } }));
      bg = this.device.createBindGroup({ layout: k.layout, entries });
      this.counters.bindGroupsCreated++;
      if (this.bindGroups.size > 4096) this.bindGroups.clear();
      this.bindGroups.set(k.layout, k.paramBytes, bufs, bg);
    }
    for (const b of bufs) b.lastBatch = this.batch;
    if (groups <= 0) return;
    if (!this.pass) {
      this.encoder ??= this.device.createCommandEncoder();
      this.pass = this.beginPass(this.encoder);
      this.passPipeline = null;
    }
    // Each native call costs ~1 µs of host time: a chain of one kernel sets its pipeline once.
    if (this.passPipeline !== k.pipeline) {
      this.pass.setPipeline(k.pipeline);
      this.passPipeline = k.pipeline;
    }
    this.pass.setBindGroup(0, bg, [paramWord * 4]);
    const y = groups <= this.maxPerDim ? 1 : Math.ceil(groups / this.maxPerDim);
    this.pass.dispatchWorkgroups(y === 1 ? groups : Math.ceil(groups / y), y);
    this.counters.dispatches++;
    if (++this.dispatches >= this.opts.opsPerSubmit) this.submit();
  }

  // buffers

  /** A buffer for the op `site` (the pool keeps a site's freed buffers for it: pool.ts). */
  alloc(bytes: number, forUpload = false, site = ''): PooledBuffer {
    if (this.capture) return this.capture.alloc(bytes, forUpload);
    return this.pool.acquire(bytes, this.batch, forUpload, site);
  }

  release(b: PooledBuffer): void {
    if (this.capture) return this.capture.release(b);
    if (b.lender) return b.lender.returned(b);
    this.pool.release(b, this.batch);
  }

  /**
   * Whether an upload of `bytes` travels in the command stream (see upload): small ones do,
   * so their buffer may be any pooled one, even one the open batch binds.
   */
  inlineUpload(bytes: number): boolean {
    return bytes > 0 && bytes <= INLINE_UPLOAD_BYTES && bytes % 4 === 0;
  }

  /**
   * Fills `b` with `data`. A large upload is a queue.writeBuffer, which runs before the open
   * batch's commands, so `b` must come from alloc(..., forUpload = true): not bound in that
   * batch. A small one (inlineUpload) is staged in the parameter arena and copied into `b`
   * by a command at this point of the stream: ordered after what the batch recorded so far,
   * so the pool can hand out the buffer it just freed, and the same buffers (and so the same
   * cached bind groups) come back every training step. Per-step uploads are small: class
   * indices, a shuffled batch's row index.
   */
  upload(b: PooledBuffer, data: ArrayBufferView, inline = false): void {
    const bytes = data.byteLength;
    if (this.capture) return this.capture.upload(b, data);
    if (!inline) {
      this.device.queue.writeBuffer(b.buffer, 0, data.buffer, data.byteOffset, bytes);
      return;
    }
    if (!this.arena.fits(bytes)) this.submit();
    const off = this.arena.stage(data);
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.encoder ??= this.device.createCommandEncoder();
    this.encoder.copyBufferToBuffer(this.arena.gpu, off, b.buffer, 0, bytes);
    b.lastBatch = this.batch;
  }

  // batching

  /** Opens a compute pass on `enc`, timed when the backend was made with `timestamps: true`. */
  beginPass(enc: GPUCommandEncoder): GPUComputePassEncoder {
    return enc.beginComputePass(this.opts.timer ? { timestampWrites: this.opts.timer.passWrites() } : undefined);
  }

  /** jit: the open batch's command encoder with no pass open, for a compiled replay to append to. */
  commandEncoder(): GPUCommandEncoder {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    return (this.encoder ??= this.device.createCommandEncoder());
  }

  /**
   * jit: copies `data` into `dst` at `dstOffset` in the command stream, staged in the parameter
   * arena (as small uploads are), so several replays of one compiled program can share a batch,
   * each with its own dynamic values. False when `data` is too large to stage: the caller then
   * writes it with writeBuffer and submits its work on its own.
   */
  stageInto(dst: GPUBuffer, dstOffset: number, data: Uint8Array): boolean {
    if (data.byteLength > this.arena.capacity >> 2) return false;
    if (!this.arena.fits(data.byteLength)) this.submit();
    const off = this.arena.stage(data);
    this.commandEncoder().copyBufferToBuffer(this.arena.gpu, off, dst, dstOffset, data.byteLength);
    return true;
  }

  /** jit: counts a compiled replay's dispatches into the open batch, which submits at `opsPerSubmit` like dispatch(). */
  addDispatches(n: number): void {
    this.dispatches += n;
    if (this.dispatches >= this.opts.opsPerSubmit) this.submit();
  }

  /** jit: a bind group made outside dispatch() (compiled replays), counted as dispatch() counts its own. */
  createBindGroup(desc: GPUBindGroupDescriptor): GPUBindGroup {
    this.counters.bindGroupsCreated++;
    return this.device.createBindGroup(desc);
  }

  /** Submits the open batch; its GPU errors are collected asynchronously and raised on the next op. */
  submit(): void {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.arena.upload(this.device.queue);
    if (this.encoder) {
      const timed = this.opts.timer?.resolve(this.encoder);
      this.device.queue.submit([this.encoder.finish()]);
      timed?.();
      this.encoder = null;
      this.counters.submits++;
    }
    this.pool.afterSubmit();
    this.dispatches = 0;
    this.batch++;
    if (this.batchOpen) {
      const ops = this.batchOps;
      const scopes = [this.device.popErrorScope(), this.device.popErrorScope(), this.device.popErrorScope()];
      this.batchOpen = false;
      this.batchOps = [];
      const prev = this.errorCheck;
      this.errorCheck = Promise.all([prev, ...scopes]).then(
        ([, ...errs]) => {
          const e = errs.find((x) => x) as GPUError | undefined;
          if (e && !this.pendingError)
            this.pendingError = new BackendError(`${describeOps(ops)}: GPU ${kindOf(e)} error: ${e.message.trim()}`);
        },
        () => undefined,
      );
    }
  }

  /** Copies `bytes` of `src` into a mappable buffer, submits, and resolves with the bytes. */
  async readBytes(op: string, src: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    const data = Math.max(4, Math.ceil(bytes / 4) * 4);
    // Armed device-side checks ride along: their slots are copied after the data.
    const flagBytes = this.flag.armed ? this.flag.bytes : 0;
    const size = data + flagBytes;
    const list = this.staging.get(size);
    let st = list?.pop();
    if (st) {
      this.stagingCount--;
      this.stagingBytes -= size;
    } else {
      st = this.device.createBuffer({ size, usage: 0x01 /* MAP_READ */ | 0x08 /* COPY_DST */, label: 'surf readback' });
    }
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.encoder ??= this.device.createCommandEncoder();
    this.encoder.copyBufferToBuffer(src, 0, st, 0, data);
    if (flagBytes) this.flag.encodeDrain(this.encoder, st, data);
    this.counters.readbacks++;
    this.submit();
    const lost = this.lostPromise.then(() => 'lost' as const);
    this.readsInFlight++;
    try {
      const r = await keepAlive(Promise.race([st.mapAsync(1 /* READ */, 0, size).then(() => 'ok' as const), lost]));
      if (r === 'lost' || this.lostInfo) throw this.lostError(op);
    } catch (e) {
      if (this.lostInfo) throw this.lostError(op);
      if (this.destroyed) throw new DisposedError(`${op}: the WebGPU backend was destroyed while the read was pending`);
      throw e instanceof BackendError
        ? e
        : new BackendError(`${op}: mapping the readback buffer failed: ${(e as Error).message}`);
    } finally {
      this.readsInFlight--;
    }
    const mapped = st.getMappedRange(0, size);
    const out = mapped.slice(0, bytes);
    const flagWords = flagBytes ? new Uint32Array(mapped.slice(data, size)) : null;
    st.unmap();
    await keepAlive(this.errorCheck);
    if (this.stagingBytes + size <= 64 * 1024 * 1024) {
      let l = this.staging.get(size);
      if (!l) this.staging.set(size, (l = []));
      l.push(st);
      this.stagingCount++;
      this.stagingBytes += size;
    } else st.destroy();
    this.check(op);
    const failed = flagWords && this.flag.decode(flagWords);
    if (failed) {
      this.flag.reset(this.device.queue);
      throw failed;
    }
    return out;
  }

  async sync(): Promise<void> {
    // With checks armed, the sync is a readback of their flag (4 bytes of it plus the slots):
    // the map resolves after all submitted work, as onSubmittedWorkDone does.
    if (this.flag.armed) {
      await this.readBytes('sync', this.flag.buffer, 4);
      return;
    }
    this.submit();
    const lost = this.lostPromise.then(() => undefined);
    await keepAlive(Promise.race([this.device.queue.onSubmittedWorkDone(), lost]));
    await keepAlive(this.errorCheck);
    if (this.opts.timer) await keepAlive(this.opts.timer.settle());
    this.check('sync');
  }

  get stagingInfo(): { buffers: number; bytes: number } {
    return { buffers: this.stagingCount, bytes: this.stagingBytes };
  }

  destroy(): void {
    if (this.destroyed) return;
    if (!this.lostInfo) {
      try {
        this.submit();
      } catch {
        /* a device in a bad state still gets destroyed */
      }
    }
    this.destroyed = true;
    this.pool.trim();
    for (const l of this.staging.values()) for (const b of l) b.destroy();
    this.staging.clear();
    this.pipelines.clear();
    this.flag.destroy();
    this.bindGroups.clear();
  }
}

/**
 * Awaits GPU work while holding the event loop open: Dawn's pending callbacks do not, so a
 * Node script whose only work is on the GPU would otherwise exit in the middle of an await.
 */
async function keepAlive<T>(p: Promise<T>): Promise<T> {
  if (typeof setInterval !== 'function' || typeof process === 'undefined' || !process.versions?.node) return p;
  const t = setInterval(() => undefined, 1000);
  try {
    return await p;
  } finally {
    clearInterval(t);
  }
}

function kindOf(e: GPUError): string {
  const n = (e as { constructor?: { name?: string } }).constructor?.name ?? '';
  return n.includes('OutOfMemory') ? 'out-of-memory' : n.includes('Internal') ? 'internal' : 'validation';
}

function describeOps(ops: readonly unknown[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ops.length && parts.length < 8; i += 2)
    parts.push(`${ops[i]} ${fmtShape(ops[i + 1] as number[])}`);
  const n = ops.length / 2;
  if (n === 1) return parts[0];
  return `one of ${n} ops in a batch (${parts.join(', ')}${n > parts.length ? ', ...' : ''})`;
}
