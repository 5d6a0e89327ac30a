import type { Backend, MatmulEpilogue, ReduceOp, Storage, Strided } from './backend';
import { DType, TypedArray, arrayFor, assertDType, dtypeOfArray } from './dtype';
import { BackendError, DTypeError, DisposedError, ShapeError, ValueError, fmtShape } from './errors';
import { E, Expr, exprDType } from './expr';
import { Shape, assertShape, broadcastShapes, matmulBatch, normAxes, normAxis, numel, shapesEqual } from './shape';
import { View } from './view';
import { DeferredRegistry } from './deferred-registry';
import { checkElements } from './limits';

/** Shared ownership of one storage by every view of it; the last release frees it. */
class StorageRef {
  private refs = 1;
  constructor(readonly storage: Storage) {}
  retain(): this {
    this.refs++;
    return this;
  }
  release(): void {
    if (--this.refs === 0) this.storage.backend.dispose(this.storage);
  }
}

// one message for operands on different backends, saying where each lives and how to
// move them (two backend objects of the same kind are told apart by number).
function mixedBackends(op: string, arrays: readonly NDArray[]): BackendError {
  const seen = [...new Set(arrays.map((x) => x.backend))];
  const twins = seen.some((b, i) => seen.findIndex((c) => c.name === b.name) !== i);
  const where = arrays.map(
    (x, i) =>
      `operand ${i} ${fmtShape(x.shape)} on ${x.backend.name}${twins ? ` #${seen.indexOf(x.backend) + 1}` : ''}`,
  );
  return new BackendError(
    `${op}: operands live on different backends (${where.join(', ')})` +
      (twins
        ? '; backends of the same kind are different objects when one replaced the other (init() or setBackend())'
        : '') +
      '; move them to one with tensor.to(getBackend()) or module.to(getBackend()) (toAsync to read back from a GPU)',
  );
}

// The safety net for arrays nobody disposed: when one is collected, its share is released.
// Registration waits for the end of the job (most arrays are disposed before it).
const collected = new DeferredRegistry<NDArray, StorageRef>(
  (ref) => ref.release(),
  (a) => (a as unknown as { ref: StorageRef | null }).ref !== null,
  (a) => {
    (a as unknown as { registered: boolean }).registered = true;
  },
);

/**
 * core's eager n-d array: a storage on one backend, read through a View. Movement ops make
 * new views of the same storage (a copy only when strides cannot express the result);
 * compute ops call the backend's raw ops and return fresh contiguous arrays. Autograd's
 * Tensor wraps this; apps normally use that instead.
 */
export class NDArray {
  private ref: StorageRef | null;
  private registered = false;

  private constructor(
    ref: StorageRef,
    readonly view: View,
    readonly dtype: DType,
  ) {
    this.ref = ref;
    collected.register(this, ref);
  }

  /** Takes ownership of a fresh storage. */
  static fromStorage(storage: Storage, shape: Shape): NDArray {
    if (storage.size !== numel(shape))
      throw new ShapeError(`fromStorage: storage of ${storage.size} elements does not fit shape ${fmtShape(shape)}`);
    return new NDArray(new StorageRef(storage), View.contiguous(shape), storage.dtype);
  }

  static fromData(backend: Backend, data: TypedArray | readonly number[], shape: Shape, dtype?: DType): NDArray {
    const sh = assertShape('fromData', shape);
    const dt = dtype
      ? assertDType('fromData', dtype)
      : Array.isArray(data)
        ? 'float32'
        : dtypeOfArray(data as TypedArray);
    if (data.length !== numel(sh))
      throw new ShapeError(`fromData: ${data.length} values do not fill shape ${fmtShape(sh)} (${numel(sh)} elements)`);
    if (Array.isArray(data)) {
      const bad = data.findIndex((v) => typeof v !== 'number' && typeof v !== 'boolean');
      if (bad >= 0)
        throw new ValueError(
          `fromData: value ${JSON.stringify(data[bad])} at index ${bad}; expected numbers (or booleans)`,
        );
    }
    let arr: TypedArray;
    if (!Array.isArray(data) && dtypeOfArray(data as TypedArray) === dt) arr = data as TypedArray;
    else {
      arr = arrayFor(dt, data.length);
      for (let i = 0; i < data.length; i++) arr[i] = dt === 'bool' ? (data[i] ? 1 : 0) : (data[i] as number);
    }
    return NDArray.fromStorage(backend.fromData(arr, dt), sh);
  }

  /** A constant tensor, computed by the backend (an elementwise expression with no inputs). */
  static full(backend: Backend, shape: Shape, value: number, dtype: DType = 'float32'): NDArray {
    const sh = assertShape('full', shape);
    assertDType('full', dtype);
    if (typeof value !== 'number') throw new ValueError(`full: fill value ${JSON.stringify(value)}; expected a number`);
    checkElements('full', numel(sh), dtype);
    backend.checkOutput?.('full', dtype, numel(sh));
    const [s] = backend.elementwise([E.c(value, dtype)], [], sh);
    return NDArray.fromStorage(s, sh);
  }

  get backend(): Backend {
    return this.storage.backend;
  }
  get shape(): readonly number[] {
    return this.view.shape;
  }
  get ndim(): number {
    return this.view.ndim;
  }
  get size(): number {
    return this.view.size;
  }
  get disposed(): boolean {
    return this.ref === null;
  }

  get storage(): Storage {
    if (!this.ref) throw new DisposedError(`NDArray of shape ${fmtShape(this.view.shape)} was used after dispose()`);
    return this.ref.storage;
  }

  get strided(): Strided {
    return { storage: this.storage, view: this.view };
  }

  dispose(): void {
    if (!this.ref) return;
    if (this.registered) collected.unregister(this);
    this.ref.release();
    this.ref = null;
  }

  private withView(view: View): NDArray {
    if (!this.ref) throw new DisposedError(`NDArray of shape ${fmtShape(this.view.shape)} was used after dispose()`);
    return new NDArray(this.ref.retain(), view, this.dtype);
  }

  /** Another reference to the same storage and view (the caller owns and disposes it). */
  share(): NDArray {
    return this.withView(this.view);
  }

  // movement: views where possible

  reshape(shape: Shape): NDArray {
    const sh = assertShape('reshape', shape);
    const v = this.view.reshape(sh);
    if (v) return this.withView(v);
    const c = this.contiguous();
    const out = c.withView(c.view.reshape(sh)!);
    c.dispose();
    return out;
  }

  permute(order: readonly number[]): NDArray {
    return this.withView(this.view.permute(order.map((a) => normAxis('permute', a, this.ndim))));
  }

  /** Broadcasts size-1 dims (and new leading dims) to `shape`; `op` names the caller in errors. */
  expand(shape: Shape, op = 'expand'): NDArray {
    return this.withView(this.view.expand(assertShape(op, shape), op));
  }

  pad(widths: readonly (readonly [number, number])[]): NDArray {
    return this.withView(this.view.pad(widths));
  }

  crop(ranges: readonly (readonly [number, number])[]): NDArray {
    return this.withView(this.view.crop(ranges));
  }

  flip(axes: number | readonly number[]): NDArray {
    return this.withView(this.view.flip(normAxes('flip', axes, this.ndim)));
  }

  /** This array if it is already a plain contiguous buffer; otherwise a contiguous copy. */
  contiguous(): NDArray {
    if (this.view.isPlain && this.storage.size === this.size) return this.withView(this.view);
    return NDArray.elementwise([E.in(0)], [this])[0];
  }

  // compute

  /**
   * The masked-input policy, in one place: the contract's matmul, reduce and gather (and a
   * matmul epilogue's inputs) never see a masked (padded) view, so a masked operand is copied
   * to a contiguous array here first; only elementwise kernels read masks. The caller
   * disposes the result when it is not `this`.
   */
  private unmasked(): NDArray {
    return this.view.mask ? this.contiguous() : this;
  }

  /**
   * Runs expressions over inputs broadcast to one shape (NumPy rules) and returns one new
   * array per expression: the single entry point to the backend's elementwise kernel.
   */
  static elementwise(outs: readonly Expr[], inputs: readonly NDArray[], op = 'elementwise'): NDArray[] {
    if (inputs.length === 0) throw new ValueError(`${op}: needs at least one input (use NDArray.full for constants)`);
    const backend = inputs[0].backend;
    for (const x of inputs) {
      if (x.backend !== backend) throw mixedBackends(op, inputs);
    }
    const dts = inputs.map((x) => x.dtype);
    for (let o = 0; o < outs.length; o++) exprDType(outs[o], dts, op);
    // The common case, every input of one shape, needs no broadcast (an eager op's hot path).
    const first = inputs[0].shape;
    let same = true;
    for (let i = 1; i < inputs.length && same; i++) same = shapesEqual(inputs[i].shape, first);
    const shape = same ? first : broadcastShapes(op, ...inputs.map((x) => x.shape));
    // A broadcast output can be larger than any input: refuse it before the backend allocates.
    if (!same) checkElements(op, numel(shape), 'float32');
    const strided = inputs.map((x) => ({
      storage: x.storage,
      view: same || shapesEqual(x.shape, shape) ? x.view : x.view.expand(shape),
    }));
    const res = backend.elementwise(outs, strided, shape);
    const arrays: NDArray[] = new Array(res.length);
    for (let o = 0; o < res.length; o++) arrays[o] = NDArray.fromStorage(res[o], shape);
    return arrays;
  }

  map(expr: Expr, ...others: NDArray[]): NDArray {
    return NDArray.elementwise([expr], others.length === 0 ? [this] : [this, ...others])[0];
  }

  cast(dtype: DType): NDArray {
    assertDType('cast', dtype);
    return this.map(E.cast(E.in(0), dtype));
  }

  private reduce(op: ReduceOp, axes: number | readonly number[] | undefined, keepdim: boolean): NDArray {
    const name = op === 'sum' ? 'sum' : 'max';
    if (this.dtype === 'bool') throw new DTypeError(`${name}: got dtype bool; expected float32 or int32 (cast first)`);
    const ax = normAxes(name, axes, this.ndim);
    const keptShape = this.shape.map((d, i) => (ax.includes(i) ? 1 : d));
    const outShape = keepdim ? keptShape : this.shape.filter((_, i) => !ax.includes(i));
    if (ax.length === 0) {
      const c = this.contiguous();
      const out = c.reshape(outShape);
      c.dispose();
      return out;
    }
    const src = this.unmasked();
    // A reduced axis of stride 0 (a broadcast) repeats one value: max reads it once and sum
    // multiplies by the count, so an expanded view of 2^32 elements needs no index past u32.
    const v = src.view;
    let repeat = 1;
    const shape = v.shape.map((d, i) => {
      if (!ax.includes(i) || v.strides[i] !== 0 || d <= 1) return d;
      repeat *= d;
      return 1;
    });
    const narrowed = repeat > 1 ? src.withView(new View(shape, v.strides, v.offset)) : src;
    const s = this.backend.reduce(op, narrowed.strided, ax);
    if (narrowed !== src) narrowed.dispose();
    if (src !== this) src.dispose();
    let r = NDArray.fromStorage(s, keptShape);
    if (op === 'sum' && repeat > 1) {
      // int32 wraps modulo 2^32 as repeated addition would.
      const k = this.dtype === 'int32' ? Number(BigInt.asIntN(32, BigInt(repeat))) : repeat;
      const scaled = r.map(E.mul(E.in(0), E.c(k, this.dtype)));
      r.dispose();
      r = scaled;
    }
    if (keepdim) return r;
    const out = r.reshape(outShape);
    r.dispose();
    return out;
  }

  sum(axes?: number | readonly number[], keepdim = false): NDArray {
    return this.reduce('sum', axes, keepdim);
  }
  max(axes?: number | readonly number[], keepdim = false): NDArray {
    return this.reduce('max', axes, keepdim);
  }

  /**
   * Batched matmul with NumPy broadcasting of batch dims; both operands at least 2-d. An
   * epilogue expression (input 0 = the product, inputs 1.. = `epilogue.inputs` broadcast to the
   * output shape) is fused into the kernel where the backend can.
   */
  matmul(other: NDArray, epilogue?: { expr: Expr; inputs: readonly NDArray[] }): NDArray {
    const a = this;
    const b = other;
    if (a.dtype !== 'float32' || b.dtype !== 'float32')
      throw new DTypeError(`matmul: got dtypes ${a.dtype} and ${b.dtype}; expected float32`);
    if (a.ndim < 2 || b.ndim < 2)
      throw new ShapeError(
        `matmul: got shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)}; expected both at least 2-d`,
      );
    if (a.backend !== b.backend) throw mixedBackends('matmul', [a, b]);
    const [m, k] = a.shape.slice(-2);
    const [k2, n] = b.shape.slice(-2);
    if (k !== k2)
      throw new ShapeError(
        `matmul: inner dimensions differ: a ${fmtShape(a.shape)} and b ${fmtShape(b.shape)} (expected a's last dim ${k} to equal b's second-to-last ${k2})`,
      );
    const batch = matmulBatch('matmul', a.shape, b.shape);
    const ua = a.unmasked();
    const ub = b.unmasked();
    const outShape = [...batch, m, n];
    let ep: MatmulEpilogue | undefined;
    const epTemps: NDArray[] = [];
    if (epilogue) {
      const dts: DType[] = ['float32', ...epilogue.inputs.map((x) => x.dtype)];
      if (exprDType(epilogue.expr, dts, 'matmul epilogue') !== 'float32')
        throw new DTypeError('matmul epilogue: expression must produce float32');
      ep = {
        expr: epilogue.expr,
        inputs: epilogue.inputs.map((x) => {
          if (x.backend !== a.backend) throw new BackendError('matmul epilogue: input lives on another backend');
          const u = x.unmasked();
          if (u !== x) epTemps.push(u);
          const shape = broadcastShapes('matmul epilogue', outShape, u.shape);
          if (!shapesEqual(shape, outShape))
            throw new ShapeError(
              `matmul epilogue: input of shape ${fmtShape(x.shape)} does not broadcast to the output ${fmtShape(outShape)}`,
            );
          return { storage: u.storage, view: u.view.expand(outShape) };
        }),
      };
    }
    const s = a.backend.matmul(
      { storage: ua.storage, view: ua.view.expand([...batch, m, k]) },
      { storage: ub.storage, view: ub.view.expand([...batch, k, n]) },
      ep,
    );
    if (ua !== a) ua.dispose();
    if (ub !== b) ub.dispose();
    epTemps.forEach((t) => t.dispose());
    return NDArray.fromStorage(s, [...batch, m, n]);
  }

  /** Rows along `axis` picked by a 1-d int32 index array (indexSelect). */
  gather(axis: number, idx: NDArray): NDArray {
    const ax = normAxis('gather', axis, this.ndim);
    if (idx.dtype !== 'int32') throw new DTypeError(`gather: index has dtype ${idx.dtype}; expected int32`);
    if (idx.ndim !== 1) throw new ShapeError(`gather: index has shape ${fmtShape(idx.shape)}; expected a 1-d index`);
    if (idx.backend !== this.backend) throw mixedBackends('gather', [this, idx]);
    const x = this.unmasked();
    const i = idx.unmasked();
    const s = this.backend.gather(x.strided, ax, i.strided);
    if (x !== this) x.dispose();
    if (i !== idx) i.dispose();
    const shape = this.shape.slice();
    shape[ax] = idx.shape[0];
    return NDArray.fromStorage(s, shape);
  }

  /** Reads the elements back in row-major order. */
  async data(): Promise<TypedArray> {
    if (this.view.isPlain && this.storage.size === this.size) return this.backend.read(this.storage);
    const c = this.contiguous();
    try {
      return await this.backend.read(c.storage);
    } finally {
      c.dispose();
    }
  }

  toString(): string {
    return `NDArray(${this.dtype}, ${fmtShape(this.shape)}, ${this.disposed ? 'disposed' : this.backend.name})`;
  }
}
