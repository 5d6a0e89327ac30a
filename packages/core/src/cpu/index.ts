import type { AttentionGrads, AttentionOptions, AttentionResult, CrossEntropyRowsOptions } from '../backend';
import { attentionBackwardCpu, attentionCpu } from './attention';
import { attentionBackwardGemm, attentionGemm } from './attention-gemm';
import { checkAttentionArgs } from '../attention';
import type {
  Backend,
  ElementwiseGroup,
  MatmulEpilogue,
  MemoryInfo,
  ReduceOp,
  ScatterMode,
  Storage,
  Strided,
} from '../backend';
import { View } from '../view';
import { hasWasmSimd } from './wasm/simd';
import { Arena, sharedArena } from './wasm/arena';
import { DType, TypedArray } from '../dtype';
import { BackendError, DisposedError } from '../errors';
import { parseOptions } from '../options';
import { Expr, exprDType } from '../expr';
import { numel } from '../shape';
import { runElementwise } from './elementwise';
import { gatherInto } from './gather';
import { matmulInto, wasmGemm } from './matmul';
import { reduceInto } from './reduce';
import { ArrayPool } from './pool';
import { CpuStorage, allocate } from './storage';
import { checkEpilogueArgs, unfusedEpilogue } from '../epilogue';
// conv
import type { ConvParams } from '../conv-params';
import { checkConvArgs, checkConvEpilogue } from '../conv';
import { convInto } from './conv';
import type { PoolParams } from '../pool-params';
import { checkPoolArgs, checkPoolBackwardArgs } from '../pool';
import { poolBackwardInto, poolInto } from './pooling';
import { crossEntropyRowsInto } from './cross-entropy-rows';
import { checkCrossEntropyRowsArgs } from '../cross-entropy-rows';
import { checkGatherArgs, checkMatmulArgs, checkOperand, checkOperandShape, checkReduceArgs } from '../validate';
// cpu threads
import { cpuThreads, setCpuThreads } from './threads/config';
// scatter and sort
import { E } from '../expr';
import { scatterInto } from './scatter';
import { sortRows } from './sort';
import { checkScatterArgs, checkSortArgs } from '../validate-ops';
import { RANDOM_STATE_WORDS, RandomParams, fillRandom } from '../rng/draw';
import { checkRandomArgs } from '../rng/ndarray';

/**
 * The arena storages live in: the kernels' linear memory when it is shared (its growth leaves
 * existing views valid) and there are WebAssembly kernels to use it; else none (JS arrays).
 */
function residentArena(): Arena | null {
  const a = hasWasmSimd() ? sharedArena() : null;
  return a && a.shared ? a : null;
}

/** The embedded default backend: the whole contract on typed arrays, synchronously. */
export class CpuBackend implements Backend {
  readonly name = 'cpu';
  // cpu threads: the description names the thread count when there is more than one.
  get description(): string {
    if (!hasWasmSimd()) return 'CPU (JavaScript)';
    const t = cpuThreads();
    return `CPU (WebAssembly SIMD + JavaScript${t > 1 ? `, ${t} threads` : ''})`;
  }
  private live = new Set<CpuStorage>();
  /** Arrays of disposed storages, reused for new ones of the same dtype and length. */
  private pool = new ArrayPool(undefined, undefined, undefined, residentArena());
  private destroyed = false;
  private readonly take = (dtype: DType, size: number) => this.pool.take(dtype, size);

  // cpu threads: the thread count is process-wide (one worker pool on the shared wasm
  // memory); a backend made with `threads` sets it. See threads/config.ts.
  constructor(opts: { threads?: number } = {}) {
    opts = parseOptions<{ threads?: number }>('CpuBackend', opts, { threads: 'any' });
    if (opts.threads !== undefined) setCpuThreads({ threads: opts.threads });
  }

  private check(): void {
    if (this.destroyed) throw new DisposedError('cpu: backend was destroyed; call init() again');
  }

  private make(dtype: DType, data: TypedArray): CpuStorage {
    const s = new CpuStorage(this, dtype, data);
    this.live.add(s);
    return s;
  }

  private arr(s: Storage): TypedArray {
    return (s as CpuStorage).data;
  }

  fromData(data: TypedArray, dtype: DType): Storage {
    this.check();
    const copy = allocate(this.take, 'fromData', dtype, [data.length]);
    copy.set(data);
    return this.make(dtype, copy);
  }

  /** One kernel per group here (the contract allows merging; a CPU loop gains nothing by it). */
  elementwiseGroups(groups: readonly ElementwiseGroup[]): Storage[][] {
    return groups.map((g) => this.elementwise(g.outs, g.inputs, g.shape));
  }

  elementwise(outs: readonly Expr[], inputs: readonly Strided[], shape: readonly number[]): Storage[] {
    this.check();
    inputs.forEach((x, i) => {
      checkOperandShape('elementwise', `input ${i}`, x, shape);
      checkOperand(this, 'elementwise', `input ${i}`, x);
    });
    const dts = inputs.map((x) => x.storage.dtype);
    const outDT = outs.map((e) => exprDType(e, dts));
    const size = numel(shape);
    const arrays = outDT.map((d) => allocate(this.take, 'elementwise', d, shape));
    if (size > 0)
      runElementwise(
        outs,
        arrays,
        inputs.map((x) => ({ data: this.arr(x.storage), dtype: x.storage.dtype, view: x.view })),
        shape,
      );
    return arrays.map((a, i) => this.make(outDT[i], a));
  }

  reduce(op: ReduceOp, x: Strided, axes: readonly number[]): Storage {
    this.check();
    checkOperand(this, 'reduce', 'input', x, { mask: false });
    checkReduceArgs(op, x, axes);
    const outShape = x.view.shape.map((d, i) => (axes.includes(i) ? 1 : d));
    const dt = x.storage.dtype;
    const out = allocate(this.take, 'reduce', dt, outShape);
    reduceInto(op, this.arr(x.storage), x.view, axes, out, dt === 'float32' ? -Infinity : -2147483648);
    return this.make(dt, out);
  }

  matmul(a: Strided, b: Strided, epilogue?: MatmulEpilogue): Storage {
    this.check();
    checkOperand(this, 'matmul', 'a', a, { mask: false });
    checkOperand(this, 'matmul', 'b', b, { mask: false });
    checkMatmulArgs(a, b);
    const nd = a.view.ndim;
    const shape = [...a.view.shape.slice(0, -1), b.view.shape[nd - 1]];
    if (epilogue) checkEpilogueArgs(this, epilogue, shape);
    const out = allocate(this.take, 'matmul', 'float32', shape) as Float32Array;
    const ep = epilogue && {
      expr: epilogue.expr,
      inputs: epilogue.inputs.map((x) => ({ data: this.arr(x.storage), dtype: x.storage.dtype, view: x.view })),
    };
    let fused = false;
    if (out.length > 0)
      fused = matmulInto(
        this.arr(a.storage) as Float32Array,
        a.view,
        this.arr(b.storage) as Float32Array,
        b.view,
        out,
        undefined,
        ep,
      );
    const prod = this.make('float32', out);
    if (!epilogue || fused) return prod;
    return unfusedEpilogue(this, prod, epilogue, shape);
  }

  gather(x: Strided, axis: number, idx: Strided): Storage {
    this.check();
    checkOperand(this, 'gather', 'source', x, { mask: false });
    checkOperand(this, 'gather', 'index', idx, { mask: false });
    checkGatherArgs(x, axis, idx);
    const shape = x.view.shape.slice();
    shape[axis] = idx.view.shape[0];
    const out = allocate(this.take, 'gather', x.storage.dtype, shape);
    if (out.length > 0)
      gatherInto(this.arr(x.storage), x.view, axis, this.arr(idx.storage) as Int32Array, idx.view, out);
    return this.make(x.storage.dtype, out);
  }

  /** The contract's crossEntropyRows: one loop per row (cross-entropy-rows.ts). */
  crossEntropyRows(z: Strided, y: Strided, opts: CrossEntropyRowsOptions): Storage[] {
    this.check();
    const op = opts.site.op;
    checkOperand(this, op, 'input', z, { mask: false });
    checkOperand(this, op, opts.site.name, y, { mask: false });
    checkCrossEntropyRowsArgs(op, z, y, opts);
    const n = z.view.shape[0];
    // A mean over the kept rows is taken here, from the targets this call reads (a jit replay
    // runs it with its own), and the count follows the row sums in s for the backward.
    const kept = !!opts.total && !!opts.meanOverKept;
    const [m, s, rows] = [n, kept ? n + 1 : n, n].map((k) => allocate(this.take, op, 'float32', [k]) as Float32Array);
    crossEntropyRowsInto(
      this.arr(z.storage) as Float32Array,
      z.view,
      this.arr(y.storage) as Int32Array,
      y.view,
      opts.smoothing,
      opts.scale,
      opts.site,
      m,
      s,
      rows,
      opts.ignoreIndex,
    );
    const out = [this.make('float32', m), this.make('float32', s), this.make('float32', rows)];
    if (!kept) return out;
    const yd = this.arr(y.storage) as Int32Array;
    let sum = 0,
      count = 0;
    for (let i = 0; i < n; i++) {
      sum += rows[i];
      if (yd[y.view.offset + i * y.view.strides[0]] !== opts.ignoreIndex) count++;
    }
    s[n] = count;
    const total = allocate(this.take, op, 'float32', [1]) as Float32Array;
    total[0] = Math.fround(sum) / count;
    return [...out, this.make('float32', total)];
  }

  // attention
  /** Float32 blocks for the GEMM attention, from the pool (in wasm memory). */
  private readonly scratch = {
    take: (size: number) => this.pool.take('float32', size) as Float32Array,
    give: (a: Float32Array) => this.pool.give('float32', a),
  };

  private attnOperands(op: string, xs: Record<string, Strided>, opts: AttentionOptions) {
    for (const [name, x] of Object.entries(xs)) checkOperand(this, op, name, x, { mask: false });
    if (opts.mask) checkOperand(this, op, 'mask', opts.mask, { mask: false });
    const mask = opts.mask && {
      data: this.arr(opts.mask.storage),
      view: opts.mask.view,
      bool: opts.mask.storage.dtype === 'bool',
    };
    return { scale: opts.scale, causal: opts.causal, mask };
  }

  attention(q: Strided, k: Strided, v: Strided, opts: AttentionOptions): AttentionResult {
    this.check();
    checkAttentionArgs('attention', q, k, v, opts);
    const o = this.attnOperands('attention', { q, k, v }, opts);
    const rows = numel(q.view.shape.slice(0, -1));
    const out = this.pool.take('float32', rows * v.view.shape[v.view.ndim - 1]) as Float32Array;
    const lse = this.pool.take('float32', rows) as Float32Array;
    const op = (x: Strided) => ({ data: this.arr(x.storage), view: x.view });
    // The GEMM form where the SIMD kernels exist; the row-at-a-time JS loops otherwise.
    if (rows > 0)
      if (wasmGemm()) attentionGemm(op(q), op(k), op(v), o, out, lse, this.scratch);
      else attentionCpu(op(q), op(k), op(v), o, out, lse);
    return { out: this.make('float32', out), lse: this.make('float32', lse) };
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
    this.check();
    checkAttentionArgs('attention backward', q, k, v, opts, { out, lse, gOut });
    const o = this.attnOperands('attention backward', { q, k, v, out, lse, gOut }, opts);
    const dq = this.pool.take('float32', numel(q.view.shape)) as Float32Array;
    const dk = this.pool.take('float32', numel(k.view.shape)) as Float32Array;
    const dv = this.pool.take('float32', numel(v.view.shape)) as Float32Array;
    const op = (x: Strided) => ({ data: this.arr(x.storage), view: x.view });
    if (dq.length + dk.length + dv.length > 0)
      if (wasmGemm())
        attentionBackwardGemm(op(q), op(k), op(v), op(out), op(lse), op(gOut), o, dq, dk, dv, this.scratch);
      else attentionBackwardCpu(op(q), op(k), op(v), op(out), op(lse), op(gOut), o, dq, dk, dv);
    return { dq: this.make('float32', dq), dk: this.make('float32', dk), dv: this.make('float32', dv) };
  }
  // scatter and sort
  scatter(mode: ScatterMode, base: Strided, idx: Strided, src: Strided): Storage {
    this.check();
    checkOperand(this, 'scatter', 'index', idx, { mask: false });
    checkOperand(this, 'scatter', 'source', src, { mask: false });
    checkScatterArgs(mode, base, idx, src);
    const [out] = this.elementwise([E.in(0)], [base], base.view.shape);
    scatterInto(mode, this.arr(out), this.arr(idx.storage) as Int32Array, idx.view, this.arr(src.storage), src.view);
    return out;
  }

  random(state: Strided, shape: readonly number[], params: RandomParams): Storage {
    this.check();
    checkOperand(this, 'random', 'state', state, { mask: false });
    checkRandomArgs(state, shape, params);
    const dt = params.dist === 'int' ? 'int32' : 'float32';
    const out = allocate(this.take, 'random', dt, shape);
    const o = state.view.offset;
    fillRandom(out, this.arr(state.storage).subarray(o, o + RANDOM_STATE_WORDS), params);
    return this.make(dt, out);
  }

  sort(x: Strided, descending: boolean): [Storage, Storage] {
    this.check();
    checkOperand(this, 'sort', 'input', x, { mask: false });
    checkSortArgs(x, descending);
    const size = numel(x.view.shape);
    const values = this.pool.take(x.storage.dtype, size);
    const indices = this.pool.take('int32', size) as Int32Array;
    if (size > 0) sortRows(this.arr(x.storage), x.view, descending, values, indices);
    return [this.make(x.storage.dtype, values), this.make('int32', indices)];
  }

  // conv
  conv(x: Strided, w: Strided, params: ConvParams, epilogue?: MatmulEpilogue): Storage {
    this.check();
    checkOperand(this, 'conv', 'input', x, { mask: false });
    checkOperand(this, 'conv', 'weight', w, { mask: false });
    const shape = checkConvArgs(x, w, params);
    checkConvEpilogue(shape, epilogue);
    epilogue?.inputs.forEach((e, i) => checkOperand(this, 'conv epilogue', `input ${i + 1}`, e));
    const out = this.pool.take('float32', numel(shape)) as Float32Array;
    out.fill(0);
    convInto(
      this.arr(x.storage) as Float32Array,
      x.view,
      this.arr(w.storage) as Float32Array,
      w.view,
      params,
      shape,
      out,
    );
    const res = this.make('float32', out);
    return epilogue ? unfusedEpilogue(this, res, epilogue, shape) : res;
  }

  // pool
  pool2d(x: Strided, params: PoolParams): [Storage, Storage | null] {
    this.check();
    checkOperand(this, 'pool', 'input', x, { mask: false });
    const shape = checkPoolArgs(x, params);
    const out = allocate(this.take, 'pool', 'float32', shape) as Float32Array;
    const arg = params.kind === 'max' ? (allocate(this.take, 'pool', 'int32', shape) as Int32Array) : null;
    if (out.length > 0) poolInto(this.arr(x.storage) as Float32Array, x.view, params, out, arg);
    return [this.make('float32', out), arg && this.make('int32', arg)];
  }

  pool2dBackward(gy: Strided, arg: Strided | null, params: PoolParams, inShape: readonly number[]): Storage {
    this.check();
    checkOperand(this, 'pool backward', 'gradient', gy, { mask: false });
    if (arg) checkOperand(this, 'pool backward', 'tap indices', arg, { mask: false });
    checkPoolBackwardArgs(gy, arg, params, inShape);
    const out = allocate(this.take, 'pool backward', 'float32', inShape) as Float32Array;
    if (out.length > 0)
      poolBackwardInto(
        this.arr(gy.storage) as Float32Array,
        gy.view,
        arg && (this.arr(arg.storage) as Int32Array),
        arg && arg.view,
        params,
        inShape,
        out,
      );
    return this.make('float32', out);
  }

  async read(s: Storage): Promise<TypedArray> {
    return this.readSync(s);
  }

  /** Synchronous readback: only the CPU backend can offer it. */
  readSync(s: Storage): TypedArray {
    this.check();
    return this.arr(s).slice();
  }

  dispose(s: Storage): void {
    const c = s as CpuStorage;
    if (this.live.delete(c)) {
      const a = c.free();
      if (a) this.pool.give(c.dtype, a);
    }
  }

  // jit: Backend.adopt
  adopt(dst: Storage, src: Storage): boolean {
    const d = dst as CpuStorage;
    const s = src as CpuStorage;
    if (!this.live.has(s))
      throw new BackendError('adopt: the source storage is not a live storage of this CPU backend');
    if (!this.live.has(d)) {
      this.dispose(s);
      return false;
    }
    if (d.dtype !== s.dtype || d.size !== s.size)
      throw new BackendError(`adopt: storages differ (${d.dtype}[${d.size}] and ${s.dtype}[${s.size}])`);
    this.live.delete(s);
    const old = d.swap(s.free()!);
    if (old) this.pool.give(d.dtype, old);
    return true;
  }

  flush(): void {}

  // fusion pass: the eager check for deferred kernels (Backend.checkOutput)
  checkOutput(): void {
    this.check();
  }

  async sync(): Promise<void> {}

  memory(): MemoryInfo {
    let bytes = 0;
    for (const s of this.live) bytes += s.data.byteLength;
    return { buffers: this.live.size, bytes };
  }

  destroy(): void {
    // Arrays in the shared arena go back to it (other backends share that memory).
    for (const s of this.live) {
      const a = s.free();
      if (a) this.pool.give(s.dtype, a);
    }
    this.live.clear();
    this.pool.clear();
    this.destroyed = true;
  }
}
