import {
  Backend,
  BackendError,
  ElementwiseGroup,
  DType,
  DTypeError,
  DisposedError,
  Expr,
  MatmulEpilogue,
  MemoryInfo,
  ReduceOp,
  ShapeError,
  Storage,
  Strided,
  TypedArray,
  ValueError,
  checkEpilogueArgs,
  checkGatherArgs,
  checkMatmulArgs,
  checkOperand,
  checkReduceArgs,
  exprDType,
  fmtShape,
  numel,
  shapesEqual,
  unfusedEpilogue,
  AttentionGrads,
  AttentionOptions,
  AttentionResult,
  checkAttentionArgs,
  parseOptions,
} from '@surf/core';
import { Acquired, DeviceRequest, acquireDevice } from './device';
import { GpuTimer } from './gpu-timer';
import { encodeElementwise, EwInput } from './kernels/elementwise/elementwise';
import { GroupSegment, encodeElementwiseGroups, segmentBindings } from './kernels/elementwise/groups';
import { exprsInfo } from './kernels/elementwise/plan-cache';
import { encodeGather } from './kernels/index/gather';
import { encodeIndexCheck } from './kernels/index/index-check';
import { ceTotalFits, encodeCrossEntropyRows } from './kernels/index/cross-entropy-rows';
import { oneDispatchScratch } from './kernels/reduce/one-dispatch';
import type { CheckSite } from './device-flag';
import {
  AttnOperand,
  AttnPlan,
  checkAttentionFits,
  encodeAttention,
  encodeAttentionBackward,
} from './kernels/attention/attention';
import { AttnTiledConfig, defaultTiledConfig } from './kernels/attention/tiled';
import {
  MatmulConfig,
  MatmulConfigOption,
  MatmulEpilogueInput,
  chooseMatmulConfig,
  collapseBatch,
  encodeMatmul,
  validateMatmulConfig,
} from './kernels/matmul/matmul';
import { DEFAULT_REDUCE, ReduceTuning, describeReduce, encodeReduce } from './kernels/reduce/reduce';
import type { PooledBuffer } from './pool';
import { Runtime } from './runtime';
import { plainLimits } from './limits';
// scatter and sort
import {
  CrossEntropyRowsOptions,
  E,
  ScatterMode,
  checkCrossEntropyRowsArgs,
  checkScatterArgs,
  checkSortArgs,
} from '@surf/core';
import { encodeScatter } from './kernels/index/scatter';
import { encodeRandom } from './kernels/random';
import { RandomParams, checkRandomArgs } from '@surf/core';
import { encodeSort, sortWidth } from './kernels/sort/sort';
// conv
import { ConvParams, checkConvArgs, checkConvEpilogue } from '@surf/core';
import { ConvConfig, DEFAULT_CONV, SOFTWARE_CONV, encodeConv, validateConvConfig } from './kernels/conv/conv';
import { PoolParams, checkPoolArgs, checkPoolBackwardArgs } from '@surf/core';
import { encodePool, encodePoolBackward } from './kernels/pool/pool2d';
import { GPUStorage } from './storage';
import { ProgramHost, compileProgram } from './replay/program'; // jit: compiled replays
import type { ReplayProgram, ReplayRecipe } from '@surf/core';

export interface WebGPUBackendOptions extends DeviceRequest {
  /**
   * Matmul tiling: a partial config (merged over the default), a chooser per problem size, or
   * 'auto' (time candidate configs on this adapter at creation; see tune/tuner.ts). Unset:
   * size-bucketed defaults (software adapters: a small rolled config).
   */
  matmul?: MatmulConfigOption | 'auto';
  /** With matmul 'auto': a JSON file (Node) or localStorage key (browser) caching the tuned table per adapter. */
  tuneCache?: string;
  /** Reduction plan knobs (kernels/reduce/reduce.ts), merged over the defaults. */
  reduce?: Partial<ReduceTuning>;
  /** Conv tiling (kernels/conv/conv.ts), merged over the adapter's default (labs compare configs). */
  conv?: Partial<ConvConfig>;
  /** Threads per workgroup for elementwise and gather kernels (default 256, capped by the adapter). */
  workgroupSize?: number;
  /**
   * Elementwise kernels with four elements per thread (vec4, every input contiguous or a
   * scalar) and with transposed inputs staged through workgroup tiles (default true); false:
   * one element per thread always.
   */
  elementwiseFastPaths?: boolean;
  /** Threads per workgroup for reductions (a power of two; default 256, capped by the adapter). */
  reduceWorkgroupSize?: number;
  /** Dispatches recorded before a batch is submitted on its own (default 128). */
  opsPerSubmit?: number;
  /**
   * Bytes of freed buffers kept for reuse (default 1 GiB); the pool keeps up to the peak of
   * live bytes when that is more (at most 4 GiB), so a step's buffers are reused next step.
   */
  poolLimitBytes?: number;
  /** Caps workgroups per grid dimension below the adapter's limit (testing the 2-D grid). */
  maxWorkgroupsPerDim?: number;
  /**
   * Time every compute pass on the GPU with timestamp queries (default false): stats() then
   * reports gpuTimeMs, summed over the passes of every batch submitted before the last sync().
   * Needs the adapter's `timestamp-query` feature (a BackendError says when it is missing); in
   * Node, Dawn's timestamp quantization is turned off for this device.
   */
  timestamps?: boolean;
  /**
   * Attention kernels: 'rows' keeps the row-per-thread kernels for every shape; a partial
   * config is merged over the adapter's default tiles (labs and tests; `shuffle` is capped by
   * the adapter's smallest subgroup, 1 without the subgroups feature). Unset: the default.
   */
  attention?: 'rows' | Partial<AttnTiledConfig>;
}

/** See WebGPUBackend.stats(). */
export interface WebGPUStats {
  dispatches: number;
  submits: number;
  readbacks: number;
  bindGroupsCreated: number;
  pipelinesCreated: number;
  /** jit replays run as a compiled program (replay/program.ts). */
  replays: number;
  /** Pipelines in the cache now. */
  pipelines: number;
  /** GPU milliseconds of every timed compute pass up to the last sync() (with `timestamps: true`). */
  gpuTimeMs?: number;
  /** Compute passes timed (with `timestamps: true`). */
  timedPasses?: number;
}

/**
 * CPU implementations of WebGPU (SwiftShader, llvmpipe, WARP) pay for every workgroupBarrier
 * with a context switch per invocation, so they get narrow reductions and matmul tiles
 * with fewer threads and more work per thread.
 */
export function isSoftwareAdapter(info: GPUAdapterInfo | null): boolean {
  if (!info) return false;
  const s = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`;
  return /swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b/i.test(s);
}

// Software adapters compile unrolled tiles for seconds each: a small rolled config.
const SOFTWARE_MATMUL = { tileM: 32, tileN: 32, tileK: 16, threadM: 4, threadN: 4, vec4: true, unroll: false };

function describe(info: GPUAdapterInfo | null): string {
  if (!info) return 'WebGPU (adapter unknown)';
  const name = [info.vendor, info.architecture, info.device].filter(Boolean).join(' ');
  return `WebGPU: ${name || 'unknown adapter'}${info.description ? ` (${info.description})` : ''}`;
}

/** The backend contract on WebGPU: every op is a WGSL kernel recorded into a batched command encoder. */
export class WebGPUBackend implements Backend {
  readonly name = 'webgpu';
  readonly description: string;
  readonly device: GPUDevice;
  readonly adapterInfo: GPUAdapterInfo | null;
  /** The adapter the device came from (null when only a device was passed in). */
  readonly adapter: GPUAdapter | null;
  readonly limits: GPUSupportedLimits;
  private rt: Runtime;
  private live = new Set<GPUStorage>();
  private liveBytes = 0;
  private peakLiveBytes = 0;
  private wg: number;
  private rwg: number;
  private maxBytes: number;
  private owned: boolean;
  private instance: unknown;

  constructor(
    acq: Acquired,
    private opts: WebGPUBackendOptions = {},
  ) {
    this.device = acq.device;
    this.adapterInfo = acq.info;
    this.adapter = acq.adapter;
    this.limits = plainLimits(acq.device.limits);
    this.owned = acq.owned;
    this.instance = acq.instance;
    this.description = describe(acq.info);
    const lim = this.limits;
    const maxInv = Math.min(lim.maxComputeInvocationsPerWorkgroup, lim.maxComputeWorkgroupSizeX);
    this.wg = Math.max(1, Math.min(opts.workgroupSize ?? 256, maxInv));
    let r = 1;
    const soft = isSoftwareAdapter(acq.info);
    while (r * 2 <= Math.min(opts.reduceWorkgroupSize ?? (soft ? 16 : 256), maxInv)) r *= 2;
    if (soft && (opts.matmul === undefined || opts.matmul === 'auto')) this.opts = { ...opts, matmul: SOFTWARE_MATMUL };
    else if (opts.matmul === 'auto') this.opts = { ...opts, matmul: undefined };
    this.rwg = r;
    this.maxBytes = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
    const mo = this.opts.matmul;
    if (mo && typeof mo !== 'function' && mo !== 'auto')
      validateMatmulConfig(chooseMatmulConfig(mo, 64, 64, 64, 1), lim);
    this.acq = acq;
    this.attnPlan = attentionPlan(acq, lim.maxComputeWorkgroupStorageSize, opts.attention);
    this.rt = new Runtime(acq.device, {
      opsPerSubmit: opts.opsPerSubmit ?? 128,
      paramArenaBytes: 256 * 1024,
      poolLimitBytes: opts.poolLimitBytes ?? 1024 * 1024 * 1024,
      maxWorkgroupsPerDim: opts.maxWorkgroupsPerDim,
      timer: opts.timestamps ? this.makeTimer() : undefined,
    });
  }

  private timer?: GpuTimer;
  private attnPlan: AttnPlan;
  private readonly acq: Acquired;

  private makeTimer(): GpuTimer {
    if (!this.device.features.has('timestamp-query')) {
      throw new BackendError(
        `createWebGPUBackend: timestamps: true needs the 'timestamp-query' feature, which this adapter (${this.description}) does not offer`,
      );
    }
    return (this.timer = new GpuTimer(this.device));
  }

  /** Number of compiled pipelines (kernels are cached by structure, not by shape or constants). */
  get pipelineCount(): number {
    return this.rt.pipelineCount;
  }

  /**
   * Running totals since the backend was made: kernel dispatches, queue submits, readbacks,
   * and cache misses (bind groups and pipelines created). Take two snapshots around a
   * training step to see what it costs.
   */
  stats(): WebGPUStats {
    const t = this.timer;
    return {
      ...this.rt.counters,
      pipelines: this.rt.pipelineCount,
      ...(t ? { gpuTimeMs: t.totalNs / 1e6, timedPasses: t.passes } : {}),
    };
  }

  // helpers

  private buf(op: string, s: Storage): PooledBuffer {
    if (s.backend !== this || !(s instanceof GPUStorage))
      throw new BackendError(
        `${op}: got a storage of backend '${s.backend?.name}'; expected one of this WebGPU backend (move the tensor first)`,
      );
    if (!s.buf) throw new DisposedError(`${op}: a ${s.dtype} storage of ${s.size} elements was used after dispose()`);
    return s.buf;
  }

  private newStorage(op: string, dtype: DType, size: number, forUpload = false): GPUStorage {
    const bytes = Math.max(size, 1) * 4;
    if (bytes > this.maxBytes) {
      throw new BackendError(
        `${op}: a ${dtype} tensor of ${size} elements needs ${bytes} bytes, more than this adapter's storage buffer limit of ${this.maxBytes} bytes (maxStorageBufferBindingSize/maxBufferSize); split the work into smaller tensors`,
      );
    }
    let b: PooledBuffer;
    try {
      b = this.rt.alloc(bytes, forUpload, op);
    } catch (e) {
      throw new BackendError(`${op}: allocating ${bytes} bytes failed: ${(e as Error).message}`);
    }
    const s = new GPUStorage(this, dtype, size, b);
    this.live.add(s);
    this.liveBytes += b.bytes;
    if (this.liveBytes > this.peakLiveBytes) {
      this.peakLiveBytes = this.liveBytes;
      this.rt.pool.followPeak(this.peakLiveBytes);
    }
    this.watching?.push(s); // jit: compiled replays
    return s;
  }

  // the contract

  fromData(data: TypedArray, dtype: DType): Storage {
    this.rt.check('fromData');
    let arr: Float32Array | Int32Array | Uint32Array;
    if (dtype === 'float32') arr = data instanceof Float32Array ? data : Float32Array.from(data as ArrayLike<number>);
    else if (dtype === 'int32')
      arr = data instanceof Int32Array ? data : Int32Array.from(data as ArrayLike<number>, (v) => v | 0);
    else if (dtype === 'bool') arr = Uint32Array.from(data as ArrayLike<number>, (v) => (v ? 1 : 0));
    else throw new DTypeError(`fromData: unknown dtype ${JSON.stringify(dtype)}; expected float32, int32 or bool`);
    // Dawn rejects writes from shared memory.
    if (typeof SharedArrayBuffer !== 'undefined' && arr.buffer instanceof SharedArrayBuffer) arr = arr.slice();
    this.rt.begin('fromData', [arr.length]);
    const inline = this.rt.inlineUpload(arr.byteLength);
    const s = this.newStorage('fromData', dtype, arr.length, !inline);
    if (arr.length) this.rt.upload(s.buf!, arr, inline);
    return s;
  }

  elementwise(outs: readonly Expr[], inputs: readonly Strided[], shape: readonly number[]): Storage[] {
    this.rt.check('elementwise');
    if (!outs.length) throw new ValueError('elementwise: got no expressions; expected at least one');
    const dts = inputs.map((x) => x.storage.dtype);
    const outDT = outs.map((e) => exprDType(e, dts));
    const ins: EwInput[] = inputs.map((x, i) => {
      if (!shapesEqual(x.view.shape, shape))
        throw new ShapeError(
          `elementwise: input ${i} has shape ${fmtShape(x.view.shape)}; expected the output shape ${fmtShape(shape)} (broadcast it first)`,
        );
      return {
        buf: this.buf('elementwise', x.storage),
        dtype: x.storage.dtype,
        offset: x.view.offset,
        strides: x.view.strides,
        mask: x.view.mask,
      };
    });
    const size = numel(shape);
    this.rt.begin('elementwise', shape);
    const res = outDT.map((d) => this.newStorage('elementwise', d, size));
    if (size === 0) return res;
    const maxBufs = this.limits.maxStorageBuffersPerShaderStage;
    const fast = this.opts.elementwiseFastPaths !== false;
    if (ins.length + outs.length <= maxBufs) {
      encodeElementwise(
        this.rt,
        outs,
        ins,
        shape,
        res.map((s) => s.buf!),
        this.wg,
        fast,
      );
      return res;
    }
    // Storage bindings per kernel are limited; outputs beyond the limit go to extra kernels.
    const distinct = new Set(ins.map((x) => x.buf)).size;
    const room = this.limits.maxStorageBuffersPerShaderStage - distinct;
    if (room < 1)
      throw new BackendError(
        `elementwise: ${distinct} distinct input buffers exceed this adapter's ${this.limits.maxStorageBuffersPerShaderStage} storage buffers per kernel; split the expression`,
      );
    for (let o = 0; o < outs.length; o += room) {
      encodeElementwise(
        this.rt,
        outs.slice(o, o + room),
        ins,
        shape,
        res.slice(o, o + room).map((s) => s.buf!),
        this.wg,
        this.opts.elementwiseFastPaths !== false,
      );
    }
    return res;
  }

  /**
   * Groups of one expression structure whose inputs are dense runs (contiguous, float32 or
   * int32) go out as one dispatch per as many groups as the storage bindings allow
   * (kernels/elementwise/groups.ts); the others as elementwise() calls.
   */
  elementwiseGroups(groups: readonly ElementwiseGroup[]): Storage[][] {
    this.rt.check('elementwiseGroups');
    const res: Storage[][] = new Array(groups.length);
    const merged = new Map<string, { i: number; seg: GroupSegment; outDT: DType[] }[]>();
    groups.forEach((g, i) => {
      const dts = g.inputs.map((x) => x.storage.dtype);
      const outDT = g.outs.map((e) => exprDType(e, dts));
      const size = numel(g.shape);
      // Every input a dense run, or one element broadcast everywhere.
      const dense =
        size > 0 &&
        g.outs.length > 0 &&
        [...dts, ...outDT].every((d) => d === 'float32' || d === 'int32') &&
        g.inputs.every(
          (x) =>
            shapesEqual(x.view.shape, g.shape) &&
            (x.view.isContiguous || broadcastScalar(x)) &&
            x.storage.backend === this &&
            (x.storage as GPUStorage).buf,
        );
      if (!dense) {
        res[i] = this.elementwise(g.outs, g.inputs, g.shape);
        return;
      }
      const ins = g.inputs.map((x) => ({
        buf: this.buf('elementwiseGroups', x.storage),
        dtype: x.storage.dtype,
        offset: x.view.offset,
        scalar: !x.view.isContiguous,
      }));
      this.rt.begin('elementwiseGroups', g.shape);
      const outs = outDT.map((d) => this.newStorage('elementwiseGroups', d, size));
      res[i] = outs;
      const seg: GroupSegment = { outs: g.outs, inputs: ins, total: size, outBufs: outs.map((s) => s.buf!) };
      const key = `${exprsInfo(g.outs).key}|${dts.join(',')}`;
      let list = merged.get(key);
      if (!list) merged.set(key, (list = []));
      list.push({ i, seg, outDT });
    });
    const room = this.limits.maxStorageBuffersPerShaderStage;
    for (const list of merged.values()) {
      let chunk: GroupSegment[] = [];
      let used = 0;
      const flush = () => {
        if (chunk.length) encodeElementwiseGroups(this.rt, chunk, list[0].outDT, this.wg);
        chunk = [];
        used = 0;
      };
      for (const { seg } of list) {
        const n = segmentBindings(seg.outs, seg.inputs);
        if (n > room)
          throw new BackendError(
            `elementwiseGroups: one group binds ${n} storage buffers, more than this adapter's ${room}`,
          );
        if (used + n > room) flush();
        chunk.push(seg);
        used += n;
      }
      flush();
    }
    return res;
  }

  reduce(op: ReduceOp, x: Strided, axes: readonly number[]): Storage {
    this.rt.check(op);
    const buf = this.buf(op, x.storage);
    checkOperand(this, op, 'input', x, { mask: false });
    checkReduceArgs(op, x, axes);
    const dt = x.storage.dtype;
    const v = x.view;
    this.rt.begin(op, v.shape);
    const outShape = v.shape.map((d, i) => (axes.includes(i) ? 1 : d));
    const out = this.newStorage(op, dt, numel(outShape));
    const desc = describeReduce(buf, dt, v.shape, v.strides, v.offset, axes);
    encodeReduce(
      this.rt,
      op,
      desc,
      out.buf!,
      this.rwg,
      this.opts.reduce ? { ...DEFAULT_REDUCE, ...this.opts.reduce } : DEFAULT_REDUCE,
    );
    return out;
  }

  matmul(a: Strided, b: Strided, epilogue?: MatmulEpilogue): Storage {
    this.rt.check('matmul');
    const as = a.view.shape;
    const bs = b.view.shape;
    const abuf = this.buf('matmul', a.storage);
    const bbuf = this.buf('matmul', b.storage);
    checkOperand(this, 'matmul', 'a', a, { mask: false });
    checkOperand(this, 'matmul', 'b', b, { mask: false });
    checkMatmulArgs(a, b);
    const nd = as.length;
    const m = as[nd - 2],
      k = as[nd - 1],
      n = bs[nd - 1];
    const batchShape = as.slice(0, -2);
    const shape = [...batchShape, m, n];
    if (epilogue) {
      for (const x of epilogue.inputs) this.buf('matmul', x.storage);
      checkEpilogueArgs(this, epilogue, shape);
    }
    this.rt.begin('matmul', [...as, n]);
    const av = a.view;
    const bv = b.view;
    const out = this.newStorage('matmul', 'float32', numel(shape));
    // The epilogue is fused into the store when its views fit the kernel's bindings.
    const room = this.limits.maxStorageBuffersPerShaderStage - 3;
    const fuse = !!epilogue && new Set(epilogue.inputs.map((x) => x.storage)).size <= room;
    const eIns = fuse ? epilogue!.inputs : [];
    // Collapse batch dims that every operand walks as one run.
    const cb = collapseBatch(batchShape, [
      av.strides.slice(0, -2),
      bv.strides.slice(0, -2),
      ...eIns.map((x) => x.view.strides.slice(0, -2)),
    ]);
    const bsh = cb.shape;
    const [ast, bst] = cb.strides;
    const cfg: MatmulConfig = chooseMatmulConfig(
      this.opts.matmul as MatmulConfigOption | undefined,
      m,
      n,
      k,
      numel(bsh),
    );
    if (typeof this.opts.matmul === 'function') validateMatmulConfig(cfg, this.limits);
    const epi = fuse
      ? {
          expr: epilogue!.expr,
          inputs: eIns.map((x, j): MatmulEpilogueInput => ({
            buf: this.buf('matmul', x.storage),
            dtype: x.storage.dtype,
            offset: x.view.offset,
            batchStrides: cb.strides[2 + j],
            rowStride: x.view.strides[nd - 2],
            colStride: x.view.strides[nd - 1],
          })),
        }
      : undefined;
    encodeMatmul(this.rt, cfg, {
      a: {
        buf: abuf,
        offset: av.offset,
        batchStrides: ast,
        rowStride: av.strides[nd - 2],
        colStride: av.strides[nd - 1],
      },
      b: {
        buf: bbuf,
        offset: bv.offset,
        batchStrides: bst,
        rowStride: bv.strides[nd - 2],
        colStride: bv.strides[nd - 1],
      },
      batchShape: bsh,
      m,
      n,
      k,
      out: out.buf!,
      epi,
    });
    if (!epilogue || fuse) return out;
    // Too many buffers for one kernel: core's second elementwise pass.
    return unfusedEpilogue(this, out, epilogue, shape);
  }

  /** The current matmul config choice (a partial config, a chooser, or undefined for the defaults). */
  get matmulOption(): MatmulConfigOption | undefined {
    return this.opts.matmul as MatmulConfigOption | undefined;
  }

  /** Replaces the matmul config choice (the tuner installs its table here). */
  setMatmulConfig(opt: MatmulConfigOption | undefined): void {
    if (opt && typeof opt !== 'function') validateMatmulConfig(chooseMatmulConfig(opt, 64, 64, 64, 1), this.limits);
    this.opts = { ...this.opts, matmul: opt };
  }

  /** Switches the attention kernels (labs compare them in one process; see WebGPUBackendOptions.attention). */
  setAttention(opt: WebGPUBackendOptions['attention']): void {
    this.attnPlan = attentionPlan(this.acq, this.limits.maxComputeWorkgroupStorageSize, opt);
  }

  /** True on SwiftShader, llvmpipe, WARP (see isSoftwareAdapter). */
  get software(): boolean {
    return isSoftwareAdapter(this.adapterInfo);
  }

  gather(x: Strided, axis: number, idx: Strided): Storage {
    this.rt.check('gather');
    const xs = x.view.shape;
    const xbuf = this.buf('gather', x.storage);
    const ibuf = this.buf('gather', idx.storage);
    checkOperand(this, 'gather', 'source', x, { mask: false });
    checkOperand(this, 'gather', 'index', idx, { mask: false });
    checkGatherArgs(x, axis, idx);
    const outShape = xs.slice();
    outShape[axis] = idx.view.shape[0];
    this.rt.begin('gather', outShape);
    const out = this.newStorage('gather', x.storage.dtype, numel(outShape));
    const v = x.view;
    encodeGather(
      this.rt,
      { buf: xbuf, dtype: x.storage.dtype, offset: v.offset, strides: v.strides, shape: v.shape },
      axis,
      { buf: ibuf, offset: idx.view.offset, stride: idx.view.strides[0], length: idx.view.shape[0] },
      out.buf!,
      this.wg,
    );
    return out;
  }

  // Device-side asserts (device-flag.ts): raised at the next read() or sync().
  checkIndices(idx: Strided, lo: number, hi: number, site: CheckSite): void {
    const op = site.op;
    this.rt.check(op);
    const ibuf = this.buf(op, idx.storage);
    checkOperand(this, op, site.name, idx, { mask: false });
    if (idx.storage.dtype !== 'int32' || idx.view.ndim !== 1)
      throw new ValueError(
        `${op}: ${site.name} has dtype ${idx.storage.dtype} and shape ${fmtShape(idx.view.shape)}; the device-side check expects a 1-d int32 index`,
      );
    this.rt.begin(`${op} index check`, idx.view.shape);
    const { buf, slot } = this.rt.flag.use(site);
    encodeIndexCheck(
      this.rt,
      { buf: ibuf, offset: idx.view.offset, stride: idx.view.strides[0], length: idx.view.shape[0] },
      lo,
      hi,
      buf,
      slot,
      this.wg,
    );
  }

  /** The contract's crossEntropyRows: one workgroup per row, the index check inside (kernels/index/cross-entropy-rows.ts). */
  crossEntropyRows(z: Strided, y: Strided, opts: CrossEntropyRowsOptions): Storage[] {
    const op = opts.site.op;
    this.rt.check(op);
    const zbuf = this.buf(op, z.storage);
    const ybuf = this.buf(op, y.storage);
    checkOperand(this, op, 'input', z, { mask: false });
    checkOperand(this, op, opts.site.name, y, { mask: false });
    checkCrossEntropyRowsArgs(op, z, y, opts);
    const [n, c] = z.view.shape;
    this.rt.begin(op, z.view.shape);
    // The rows' sum in the same dispatch (the loss's mean or sum: no separate reduce). With
    // meanOverKept, s has one more float: the kept count (the backward divides by it).
    const fits = !!opts.total && ceTotalFits(n);
    const kept = fits && !!opts.meanOverKept;
    const outs = [
      this.newStorage(op, 'float32', n),
      this.newStorage(op, 'float32', kept ? n + 1 : n),
      this.newStorage(op, 'float32', n),
    ] as [GPUStorage, GPUStorage, GPUStorage];
    const total = fits ? this.newStorage(op, 'float32', 1) : null;
    const { buf, slot } = this.rt.flag.use(opts.site);
    encodeCrossEntropyRows(
      this.rt,
      {
        z: { buf: zbuf, offset: z.view.offset, rowStride: z.view.strides[0], colStride: z.view.strides[1] },
        y: { buf: ybuf, offset: y.view.offset, stride: y.view.strides[0] },
        n,
        c,
      },
      { eps: opts.smoothing, scale: opts.scale, ignoreIndex: opts.ignoreIndex, meanOverKept: !!opts.meanOverKept },
      [outs[0].buf!, outs[1].buf!, outs[2].buf!],
      buf,
      slot,
      64,
      total ? { out: total.buf!, scratch: oneDispatchScratch(this.rt) } : undefined,
    );
    return total ? [...outs, total] : outs;
  }

  // attention
  private attnArgs(
    op: string,
    q: Strided,
    k: Strided,
    v: Strided,
    opts: AttentionOptions,
    rest: Record<string, Strided> = {},
  ) {
    this.rt.check(op);
    checkAttentionArgs(
      op,
      q,
      k,
      v,
      opts,
      Object.keys(rest).length ? { out: rest.out, lse: rest.lse, gOut: rest.gOut } : undefined,
    );
    const all: Record<string, Strided> = { q, k, v, ...rest, ...(opts.mask ? { mask: opts.mask } : {}) };
    for (const [name, x] of Object.entries(all)) checkOperand(this, op, name, x, { mask: false });
    const o = (x: Strided): AttnOperand => ({
      buf: this.buf(op, x.storage),
      offset: x.view.offset,
      strides: x.view.strides,
    });
    const nd = q.view.ndim;
    const dims = {
      batch: q.view.shape.slice(0, -2),
      L: q.view.shape[nd - 2],
      S: k.view.shape[nd - 2],
      E: q.view.shape[nd - 1],
      Ev: v.view.shape[nd - 1],
    };
    const mask = opts.mask ? o(opts.mask) : null;
    const maskKind = !opts.mask
      ? ('none' as const)
      : opts.mask.storage.dtype === 'bool'
        ? ('bool' as const)
        : ('float' as const);
    checkAttentionFits(op, dims);
    return { o, dims, mask, maskKind };
  }

  attention(q: Strided, k: Strided, v: Strided, opts: AttentionOptions): AttentionResult {
    const { o, dims, mask, maskKind } = this.attnArgs('attention', q, k, v, opts);
    const rows = numel([...dims.batch, dims.L]);
    this.rt.begin('attention', q.view.shape);
    const out = this.newStorage('attention', 'float32', rows * dims.Ev);
    const lse = this.newStorage('attention', 'float32', rows);
    encodeAttention(
      this.rt,
      dims,
      o(q),
      o(k),
      o(v),
      mask,
      maskKind,
      opts.scale,
      opts.causal,
      out.buf!,
      lse.buf!,
      this.attnPlan,
    );
    return { out, lse };
  }

  attentionBackward(
    q: Strided,
    k: Strided,
    v: Strided,
    out: Strided,
    lse: Strided,
    gOut: Strided,
    opts: AttentionOptions,
  ): AttentionGrads {
    const op = 'attention backward';
    const { o, dims, mask, maskKind } = this.attnArgs(op, q, k, v, opts, { out, lse, gOut });
    this.rt.begin(op, q.view.shape);
    const rows = numel([...dims.batch, dims.L]);
    const stats = this.newStorage(op, 'float32', 2 * rows);
    const dq = this.newStorage(op, 'float32', numel(q.view.shape));
    const dk = this.newStorage(op, 'float32', numel(k.view.shape));
    const dv = this.newStorage(op, 'float32', numel(v.view.shape));
    encodeAttentionBackward(
      this.rt,
      dims,
      o(q),
      o(k),
      o(v),
      mask,
      maskKind,
      o(out),
      o(lse),
      o(gOut),
      opts.scale,
      opts.causal,
      stats.buf!,
      dq.buf!,
      dk.buf!,
      dv.buf!,
      this.attnPlan,
    );
    this.dispose(stats);
    return { dq, dk, dv };
  }
  // scatter and sort
  scatter(mode: ScatterMode, base: Strided, idx: Strided, src: Strided): Storage {
    this.rt.check('scatter');
    checkScatterArgs(mode, base, idx, src);
    // Core unmasks views before calling (NDArray-level scatterFlat); a direct caller gets an error.
    checkOperand(this, 'scatter', 'index', idx, { mask: false });
    checkOperand(this, 'scatter', 'source', src, { mask: false });
    const shape = base.view.shape;
    const [out] = this.elementwise([E.in(0)], [base], shape) as GPUStorage[];
    this.rt.begin('scatter', shape);
    encodeScatter(
      this.rt,
      mode,
      base.storage.dtype,
      idx.view.shape[0],
      numel(shape),
      { buf: this.buf('scatter', idx.storage), offset: idx.view.offset, stride: idx.view.strides[0] },
      { buf: this.buf('scatter', src.storage), offset: src.view.offset, stride: src.view.strides[0] },
      out.buf!,
      this.wg,
    );
    return out;
  }

  sort(x: Strided, descending: boolean): [Storage, Storage] {
    this.rt.check('sort');
    checkSortArgs(x, descending);
    const shape = x.view.shape;
    const dt = x.storage.dtype;
    const n = shape[shape.length - 1];
    const size = numel(shape);
    // The network reads rows contiguously: copy any other layout first.
    const c = x.view.isPlain ? null : (this.elementwise([E.in(0)], [x], shape)[0] as GPUStorage);
    this.rt.begin('sort', shape);
    const values = this.newStorage('sort', dt, size);
    const indices = this.newStorage('sort', 'int32', size);
    if (size > 0) {
      const rows = size / n;
      const k = this.newStorage('sort', dt, rows * sortWidth(n));
      const v = this.newStorage('sort', 'int32', rows * sortWidth(n));
      encodeSort(
        this.rt,
        dt,
        this.buf('sort', c ?? x.storage),
        n,
        rows,
        descending,
        k.buf!,
        v.buf!,
        values.buf!,
        indices.buf!,
        this.wg,
      );
      this.dispose(k);
      this.dispose(v);
    }
    if (c) this.dispose(c);
    return [values, indices];
  }
  random(state: Strided, shape: readonly number[], params: RandomParams): Storage {
    this.rt.check('random');
    checkOperand(this, 'random', 'state', state, { mask: false });
    const n = checkRandomArgs(state, shape, params);
    const sbuf = this.buf('random', state.storage);
    this.rt.begin('random', shape);
    const out = this.newStorage('random', params.dist === 'int' ? 'int32' : 'float32', n);
    encodeRandom(this.rt, params, n, { buf: sbuf, offset: state.view.offset }, out.buf!, this.wg);
    return out;
  }

  private get convConfig(): ConvConfig {
    const c = { ...(this.software ? SOFTWARE_CONV : DEFAULT_CONV), ...this.opts.conv };
    if (this.opts.conv) validateConvConfig(c);
    return c;
  }

  // conv: the implicit-GEMM kernel in kernels/conv/conv.ts; 1-d convs are lifted to 2-d (H = 1).
  conv(x: Strided, w: Strided, params: ConvParams, epilogue?: MatmulEpilogue): Storage {
    this.rt.check('conv');
    const shape = checkConvArgs(x, w, params);
    checkConvEpilogue(shape, epilogue);
    this.buf('conv', x.storage);
    this.buf('conv', w.storage);
    if (x.view.mask || w.view.mask)
      throw new ValueError(
        'conv: input or weight has a masked (padded) view; expected no mask (make it contiguous first)',
      );
    this.rt.begin('conv', shape);
    const out = this.newStorage('conv', 'float32', numel(shape));
    const one = shape.length === 3;
    const lift = <T>(a: readonly T[], unit: T): T[] => (one ? [a[0], a[1], unit, a[2]] : a.slice());
    const two = (a: readonly number[]): [number, number] => (one ? [1, a[0]] : [a[0], a[1]]);
    const room = this.limits.maxStorageBuffersPerShaderStage - 3;
    const fuse =
      !!epilogue &&
      epilogue.inputs.every((e) => !e.view.mask) &&
      new Set(epilogue.inputs.map((e) => e.storage)).size <= room;
    const [n, c, h, wd] = lift(x.view.shape, 1);
    const [o, , kH, kW] = lift(w.view.shape, 1);
    const [, , oH, oW] = lift(shape, 1);
    encodeConv(
      this.rt,
      this.convConfig,
      { buf: this.buf('conv', x.storage), offset: x.view.offset, strides: lift(x.view.strides, 0) },
      { buf: this.buf('conv', w.storage), offset: w.view.offset, strides: lift(w.view.strides, 0) },
      {
        n,
        c,
        h,
        w: wd,
        o,
        kH,
        kW,
        oH,
        oW,
        groups: params.groups,
        stride: two(params.stride),
        dilation: two(params.dilation),
        lhsDilation: two(params.lhsDilation),
        padLo: one ? [0, params.padding[0][0]] : [params.padding[0][0], params.padding[1][0]],
      },
      out.buf!,
      fuse
        ? {
            expr: epilogue!.expr,
            inputs: epilogue!.inputs.map((e) => ({
              buf: this.buf('conv', e.storage),
              dtype: e.storage.dtype,
              offset: e.view.offset,
              strides: lift(e.view.strides, 0),
            })),
          }
        : undefined,
      (m, n, k, b) => chooseMatmulConfig(this.opts.matmul as MatmulConfigOption | undefined, m, n, k, b),
    );
    if (!epilogue || fuse) return out;
    return unfusedEpilogue(this, out, epilogue, shape);
  }

  // pool: one-pass windowed kernels in kernels/pool/pool2d.ts.
  pool2d(x: Strided, params: PoolParams): [Storage, Storage | null] {
    this.rt.check('pool2d');
    const xbuf = this.buf('pool2d', x.storage);
    checkOperand(this, 'pool2d', 'input', x, { mask: false });
    const shape = checkPoolArgs(x, params, 'pool2d');
    this.rt.begin('pool2d', shape);
    const out = this.newStorage('pool2d', 'float32', numel(shape));
    const arg = params.kind === 'max' ? this.newStorage('pool2d', 'int32', numel(shape)) : null;
    encodePool(
      this.rt,
      { buf: xbuf, offset: x.view.offset, strides: x.view.strides },
      x.view.shape,
      params,
      out.buf!,
      arg ? arg.buf! : null,
      this.wg,
    );
    return [out, arg];
  }

  pool2dBackward(gy: Strided, arg: Strided | null, params: PoolParams, inShape: readonly number[]): Storage {
    this.rt.check('pool2d backward');
    const gbuf = this.buf('pool2d backward', gy.storage);
    const abuf = arg && this.buf('pool2d backward', arg.storage);
    checkOperand(this, 'pool2d backward', 'gradient', gy, { mask: false });
    if (arg) checkOperand(this, 'pool2d backward', 'tap indices', arg, { mask: false });
    checkPoolBackwardArgs(gy, arg, params, inShape, 'pool2d backward');
    this.rt.begin('pool2d backward', inShape);
    const out = this.newStorage('pool2d backward', 'float32', numel(inShape));
    encodePoolBackward(
      this.rt,
      { buf: gbuf, offset: gy.view.offset, strides: gy.view.strides },
      arg && abuf ? { buf: abuf, offset: arg.view.offset, strides: arg.view.strides } : null,
      inShape,
      params,
      out.buf!,
      this.wg,
    );
    return out;
  }

  async read(s: Storage): Promise<TypedArray> {
    this.rt.check('read');
    const b = this.buf('read', s);
    if (s.size === 0)
      return s.dtype === 'float32' ? new Float32Array(0) : s.dtype === 'int32' ? new Int32Array(0) : new Uint8Array(0);
    this.rt.begin('read', [s.size]);
    const bytes = await this.rt.readBytes('read', b.buffer, s.size * 4);
    if (s.dtype === 'float32') return new Float32Array(bytes);
    if (s.dtype === 'int32') return new Int32Array(bytes);
    return Uint8Array.from(new Uint32Array(bytes));
  }

  dispose(s: Storage): void {
    if (!(s instanceof GPUStorage) || s.backend !== this || !s.buf) return;
    const b = s.buf;
    s.buf = null;
    if (this.live.delete(s)) this.liveBytes -= b.bytes;
    if (!this.rt.destroyed) this.rt.release(b);
  }

  // jit: Backend.adopt (the released buffer goes back to the pool in queue order, as dispose)
  adopt(dst: Storage, src: Storage): boolean {
    const sb = this.buf('adopt', src);
    if (!(dst instanceof GPUStorage) || dst.backend !== this)
      throw new BackendError('adopt: the destination is not a storage of this WebGPU backend');
    const s = src as GPUStorage;
    if (!dst.buf) {
      this.dispose(s);
      return false;
    }
    if (dst.dtype !== s.dtype || dst.size !== s.size)
      throw new BackendError(`adopt: storages differ (${dst.dtype}[${dst.size}] and ${s.dtype}[${s.size}])`);
    const old = dst.buf;
    dst.buf = sb;
    s.buf = null;
    this.live.delete(s);
    this.liveBytes -= old.bytes;
    if (!this.rt.destroyed) this.rt.release(old);
    return true;
  }

  // jit: Backend.compileReplay (replay/program.ts)
  private watching: GPUStorage[] | null = null;
  private programs = new Map<object, { bytes: number; buffers: number; dispose(): void }>();

  compileReplay(recipe: ReplayRecipe): ReplayProgram | null {
    this.rt.check('jit compile');
    const host: ProgramHost = {
      rt: this.rt,
      newStorage: (dtype, size) => this.newStorage('jit replay', dtype, size),
      bufferOf: (op, s) => this.buf(op, s),
      watch: (list) => {
        this.watching = list;
      },
      forget: (s) => {
        if (s.buf && this.live.delete(s)) this.liveBytes -= s.buf.bytes;
      },
      lend: (s, b) => {
        const old = s.buf!;
        s.buf = b;
        this.liveBytes += b.bytes - old.bytes;
        this.rt.release(old);
      },
      wrap: (dtype, size, b) => {
        const s = new GPUStorage(this, dtype, size, b);
        this.live.add(s);
        this.liveBytes += b.bytes;
        return s;
      },
      account: (p, bytes, buffers) => {
        if (bytes > 0) this.programs.set(p, { bytes, buffers, dispose: () => (p as ReplayProgram).dispose() });
        else this.programs.delete(p);
      },
    };
    return compileProgram(host, recipe);
  }

  // fusion pass: the eager check for deferred kernels (Backend.checkOutput)
  checkOutput(op: string, dtype: DType, size: number): void {
    this.rt.check(op);
    // newStorage throws the buffer-limit error before allocating anything; below it, skip.
    if (Math.max(size, 1) * 4 > this.maxBytes) this.newStorage(op, dtype, size);
  }

  flush(): void {
    if (this.rt.destroyed || this.rt.lostInfo) return;
    this.rt.submit();
  }

  // jit: Backend.readsInFlight
  readsInFlight(): number {
    return this.rt.readsInFlight;
  }

  async sync(): Promise<void> {
    this.rt.check('sync');
    await this.rt.sync();
  }

  memory(): MemoryInfo {
    const st = this.rt.stagingInfo;
    let pb = 0;
    let pn = 0;
    for (const p of this.programs.values()) {
      pb += p.bytes;
      pn += p.buffers;
    }
    return {
      // jit: compiled replays hold their intermediates, arguments' copies and parameter blocks.
      buffers: this.live.size + pn,
      bytes: this.liveBytes + pb,
      pooledBuffers: this.rt.pool.pooledBuffers + st.buffers,
      pooledBytes: this.rt.pool.pooledBytes + st.bytes,
    };
  }

  /** Frees pooled (not live) buffers. */
  trimPool(): void {
    // Pooled buffers may still be bound by the open batch: submit it first.
    this.rt.submit();
    this.rt.pool.trim();
  }

  destroy(): void {
    if (this.rt.destroyed) return;
    for (const p of [...this.programs.values()]) p.dispose();
    this.rt.destroy();
    this.timer?.destroy();
    for (const s of this.live) {
      s.buf?.buffer.destroy();
      s.buf = null;
    }
    this.live.clear();
    this.liveBytes = 0;
    if (this.owned) this.device.destroy();
    this.instance = null;
  }
}

/** One element broadcast to the view's whole shape: every stride 0, no mask. */
const broadcastScalar = (x: Strided): boolean => x.view.strides.every((st) => st === 0) && !x.view.mask;

/** Which attention kernels this device runs (see WebGPUBackendOptions.attention). */
function attentionPlan(acq: Acquired, maxBytes: number, opt: WebGPUBackendOptions['attention']): AttnPlan {
  const sgMin = acq.device.features.has('subgroups') ? (acq.info?.subgroupMinSize ?? 1) : 1;
  const base = defaultTiledConfig(maxBytes, sgMin);
  if (opt === 'rows' || !base) return { tiled: null, maxBytes };
  const tiled = { ...base, ...opt };
  if (!(tiled.unroll >= 1 && Number.isInteger(Math.log2(tiled.unroll))))
    throw new BackendError(`createWebGPUBackend: attention.unroll ${tiled.unroll}; expected a power of two`);
  tiled.shuffle = Math.max(1, Math.min(tiled.shuffle, sgMin));
  return { tiled, maxBytes };
}

/** The device request of a timed backend: the feature, and Dawn's quantization (100 µs steps in browsers) off. */
function timestampRequest(opts: WebGPUBackendOptions): WebGPUBackendOptions {
  return {
    ...opts,
    features: [...(opts.features ?? []), 'timestamp-query'],
    dawnToggles: [...(opts.dawnToggles ?? []), 'disable-dawn-features=timestamp_quantization'],
  };
}

/** Creates a WebGPU backend: finds an adapter (navigator.gpu, or Dawn in Node) unless `device`/`adapter` are given. */
export async function createWebGPUBackend(opts: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  opts = parseOptions<WebGPUBackendOptions>('createWebGPUBackend', opts, {
    device: 'object',
    adapter: 'object',
    powerPreference: ['low-power', 'high-performance'],
    dawnToggles: 'array',
    features: 'array',
    matmul: 'any',
    tuneCache: 'string',
    reduce: 'object',
    conv: 'object',
    workgroupSize: 'posint',
    elementwiseFastPaths: 'boolean',
    reduceWorkgroupSize: 'posint',
    opsPerSubmit: 'posint',
    poolLimitBytes: 'nonnegative',
    maxWorkgroupsPerDim: 'posint',
    timestamps: 'boolean',
    attention: 'any',
  });
  const acq = await acquireDevice(opts.timestamps ? timestampRequest(opts) : opts);
  let b: WebGPUBackend;
  try {
    b = new WebGPUBackend(acq, opts);
  } catch (e) {
    if (acq.owned) acq.device.destroy();
    throw e;
  }
  if (opts.matmul === 'auto' && !b.software) {
    const { autoTune } = await import('./tune/tuner');
    await autoTune(b, { cache: opts.tuneCache });
  }
  return b;
}
