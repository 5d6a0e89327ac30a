import {
  DType,
  DTypeError,
  DisposedError,
  NDArray,
  ShapeError,
  SurfTypeError,
  Storage,
  TypedArray,
  ValueError,
  fmtShape,
  shapesEqual,
  typeErr,
} from '@surf/core';
import { Scalar, requireFloat } from './dtypes';
import { BackwardOptions, addInto, freeNode, runBackward } from './engine';
import { GradNode, alias } from './node';
import { Token, tidy, track, untrack } from './scope';
import { readAndCollect } from './gc/pressure';
import { PendingResult, addToFrontier, leaveFrontier } from './fusion/pending';
import { storageHolder } from './jit/hooks'; // jit
import { tensorWatch } from './jit/watch';
import * as A from './ops/arith';
import * as U from './ops/activations';
import * as R from './ops/reduce';
import { logsumexp } from './ops/softmax';
import * as S from './ops/shape';
import * as J from './ops/join';
import { softmax, logSoftmax } from './ops/softmax';
import { indexSelect } from './ops/index-select';
import { matmul, dot } from './ops/matmul';
// moving between backends
import { BackendTarget, readSync, toBackend, toBackendAsync } from './move';
import { JSON_MAX_ELEMENTS, formatPlaceholder, formatTensor } from './format';
// raw elementwise ops of the op table
import * as Special from './ops/special';
import * as Rounding from './ops/rounding';
import * as Bitwise from './ops/bitwise';
// indexing, gather/scatter, sort, scans, norms, in-place
import { isGradEnabled, noGrad } from './grad-mode';
import { IndexArg, index as indexOp, slice as sliceOp } from './ops/index';
import { gather as gatherOp } from './ops/gather';
import { scatter as scatterOp, scatterAdd as scatterAddOp } from './ops/scatter';
import { SortResult, sort as sortOp, argsort as argsortOp, topk as topkOp } from './ops/sort';
import { cumsum as cumsumOp, prod as prodOp } from './ops/scan';
import { NormOrder, norm as normOp } from './ops/norm';
import { any as anyOp, all as allOp } from './ops/logical';
import { repeat as repeatOp } from './ops/repeat';
import { split as splitOp, chunk as chunkOp } from './ops/split';
import { triu as triuOp, tril as trilOp } from './ops/triangle';
import { maskedFill as maskedFillOp } from './ops/masked-fill';
import { PadOptions, pad as padOp } from './ops/pad';
import * as Inplace from './ops/inplace';
import * as NF from './ops/nonfinite';
import type { NanToNumOptions } from './ops/nonfinite';
import { IsCloseOptions, isclose as isCloseOp, allclose as allCloseOp } from './ops/isclose';
import { cumprod as cumprodOp } from './ops/cumprod';
import { roll as rollOp } from './ops/roll';
import { diag as diagOp, diagonal as diagonalOp } from './ops/diagonal';
import { outer as outerOp } from './ops/outer';
import { square as squareOp } from './ops/square';
import { lerp as lerpOp } from './ops/lerp';
import * as LO from './ops/logical-ops';
import { UniqueOptions, UniqueResult, unique as uniqueOp } from './ops/unique';
import { MinMaxResult, maxDim, minDim } from './ops/extremum-dim';

export type Operand = Tensor | Scalar;
/** A tensor hook: sees the gradient; returning a tensor replaces it. */
export type TensorHook = (grad: Tensor) => Tensor | void | undefined;
export interface HookHandle {
  remove(): void;
}
export type Dims = number | readonly number[];
export type NestedArray = number | boolean | readonly NestedArray[];

function shapeArgs(op: string, args: readonly (number | readonly number[])[]): number[] {
  const dims = args.length === 1 && Array.isArray(args[0]) ? (args[0] as readonly number[]) : (args as number[]);
  if (!dims.every((d) => typeof d === 'number'))
    throw new ShapeError(`${op}: invalid shape ${JSON.stringify(args)}; expected numbers or one array of numbers`);
  return dims.slice();
}

function nest(data: TypedArray, shape: readonly number[], bool: boolean): NestedArray {
  const at = (i: number): number | boolean => (bool ? data[i] !== 0 : data[i]);
  if (shape.length === 0) return at(0);
  let off = 0;
  const build = (d: number): NestedArray[] => {
    const out: NestedArray[] = [];
    for (let i = 0; i < shape[d]; i++) out.push(d === shape.length - 1 ? at(off++) : build(d + 1));
    return out;
  };
  return build(0);
}

/**
 * The user-facing n-d array with reverse-mode autodiff (PyTorch's torch.Tensor, camelCase).
 * It wraps one core NDArray on the current backend plus its autograd state: `requiresGrad`,
 * `.grad` on leaves, and the node that produced it. Ops are eager: each runs its kernel now,
 * and when a parent requires grad, records how to send gradients back. The exception is a
 * matmul's result, which waits for its first reader so that elementwise ops on it can join
 * its kernel (the fusion pass, fusion/pending.ts).
 */
export class Tensor {
  private _nd: NDArray | null;
  private _requiresGrad: boolean;
  private _grad: Tensor | null = null;
  private readonly _token: Token;
  /** @internal The op that made this tensor; null for leaves and once freed. */
  _node: GradNode | null = null;
  /** @internal Live nodes that list this tensor as a parent (keeps its node after dispose()). */
  _uses = 0;
  private readonly _leaf: boolean;

  // fusion pass: a matmul result not computed yet (fusion/pending.ts)
  private _pending: PendingResult | null = null;
  /** @internal The pending matmul behind this tensor, while its value has not been read. */
  get _lazy(): PendingResult | null {
    return this._pending;
  }
  /** @internal Computes a pending value now (first read, or the end of the synchronous run). */
  _materialize(): void {
    const p = this._pending;
    if (!p) return;
    this._nd = p.take();
    this._pending = null;
    leaveFrontier(this);
  }

  /** @internal Use tensor(), Tensor.fromNDArray() or an op. */
  constructor(
    data: NDArray | PendingResult,
    opts: { requiresGrad?: boolean; node?: GradNode; untracked?: boolean } = {},
  ) {
    const nd = data instanceof PendingResult ? null : data;
    this._nd = nd;
    if (data instanceof PendingResult) {
      this._pending = data;
      addToFrontier(this);
    }
    this._leaf = !opts.node;
    this._requiresGrad = false;
    if (opts.node) {
      this._node = opts.node;
      this._requiresGrad = true;
      for (const p of opts.node.parents) if (p._node) p._uses++;
    } else if (opts.requiresGrad) {
      requireFloat('requiresGrad', this.dtype);
      this._requiresGrad = true;
    }
    this._token = track(this, !opts.untracked);
    tensorWatch()?.made(this);
  }

  /**
   * Wraps a core NDArray (taking ownership: disposing the tensor disposes it). For @surf/nn
   * and apps that compute with NDArray.elementwise directly.
   */
  static fromNDArray(nd: NDArray, opts: { requiresGrad?: boolean } = {}): Tensor {
    if (!(nd instanceof NDArray)) throw new ValueError('Tensor.fromNDArray: expected a core NDArray');
    return new Tensor(nd, { requiresGrad: opts.requiresGrad });
  }

  /** The underlying core NDArray (owned by this tensor: do not dispose it). */
  get ndarray(): NDArray {
    tensorWatch()?.read(this);
    if (this._pending) this._materialize();
    if (!this._nd)
      throw new DisposedError(
        `Tensor of shape ${fmtShape(this._shapeSeen)} was used after ${this._disposedBy ?? 'dispose()'}`,
      );
    return this._nd;
  }

  /** @internal The NDArray, or a DisposedError that names the op. */
  nd(op: string): NDArray {
    tensorWatch()?.read(this);
    if (this._pending) this._materialize();
    if (!this._nd)
      throw new DisposedError(
        `${op}: a tensor of shape ${fmtShape(this._shapeSeen)} (${this._dtypeSeen}) was used after ${this._disposedBy ?? 'dispose()'}`,
      );
    return this._nd;
  }

  /** @internal What freed this tensor, when not the user's dispose() (errors name it). */
  private _disposedBy: string | null = null;

  /** @internal Frees the tensor on its owner's behalf; using it afterwards raises a DisposedError naming `by`. */
  _release(by: string): void {
    if (this.isDisposed) return;
    this._disposedBy = by;
    this.dispose();
  }

  /** @internal The storage held now (null when disposed or not computed yet): jit's guards. */
  _storageNow(): Storage | null {
    return this._nd ? this._nd.storage : null;
  }

  private _shapeSeen: readonly number[] = [];
  private _dtypeSeen: DType = 'float32';

  /** @internal The shape without a copy (hot paths that only read it). */
  get _dims(): readonly number[] {
    return this._nd ? this._nd.shape : this._pending ? this._pending.shape : this._shapeSeen;
  }
  get shape(): number[] {
    return (this._nd ? this._nd.shape : this._pending ? this._pending.shape : this._shapeSeen).slice();
  }
  get ndim(): number {
    return this.shape.length;
  }
  get numel(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  get dtype(): DType {
    return this._nd ? this._nd.dtype : this._pending ? 'float32' : this._dtypeSeen;
  }
  get isDisposed(): boolean {
    return this._nd === null && this._pending === null;
  }
  /** True for tensors not made by a recorded op (inputs, parameters); only leaves keep .grad. */
  get isLeaf(): boolean {
    return this._leaf;
  }

  get requiresGrad(): boolean {
    return this._requiresGrad;
  }
  set requiresGrad(v: boolean) {
    this.requiresGrad_(v);
  }

  /** Marks a leaf as a parameter to differentiate with respect to (PyTorch's requires_grad_). */
  requiresGrad_(v = true): this {
    if (!this._leaf)
      throw new ValueError(
        `requiresGrad_: only leaf tensors can change requiresGrad (this one was made by '${this._node?.op ?? 'an op'}'; use detach() first)`,
      );
    if (v) requireFloat('requiresGrad_', this.dtype);
    this._requiresGrad = v;
    return this;
  }

  /** The accumulated gradient of a leaf after backward(); null before. */
  get grad(): Tensor | null {
    return this._grad;
  }
  /** Setting null (zeroing the grad) disposes the previous gradient tensor. */
  set grad(g: Tensor | null) {
    if (g !== null && !(g instanceof Tensor)) throw new ValueError('grad: expected a Tensor or null');
    if (g && !shapesEqual(g.shape, this.shape))
      throw new ShapeError(`grad: got shape ${fmtShape(g.shape)}; expected ${fmtShape(this.shape)}`);
    if (this._grad && this._grad !== g) this._grad.dispose();
    this._grad = g;
  }

  /** @internal Puts .grad aside without disposing it (gradcheck restores the user's grads). */
  _swapGrad(g: Tensor | null): Tensor | null {
    const prev = this._grad;
    this._grad = g;
    return prev;
  }

  /** @internal Adds a gradient (consumed) into .grad. */
  _accumulateGrad(g: NDArray): void {
    if (this._grad && !this._grad.isDisposed) {
      this._grad._replace(addInto(this._grad.nd('backward'), g));
      return;
    }
    const own = g.contiguous();
    g.dispose();
    this._grad = new Tensor(own, { untracked: true });
    // jit: a replay gives this leaf its new gradient even when the recorded one was zeroed since
    const shape = own.shape;
    storageHolder(own.storage, (s) => {
      if (this._grad && !this._grad.isDisposed) s.backend.dispose(s);
      else this._grad = new Tensor(NDArray.fromStorage(s, shape), { untracked: true });
    });
  }

  /** @internal Swaps the data without touching the graph. */
  _replace(nd: NDArray): void {
    if (this._pending) {
      // fusion pass: a pending value being replaced is never needed
      this._pending.release();
      this._pending = null;
      leaveFrontier(this);
    }
    const old = this._nd;
    this._nd = nd;
    if (old && old !== nd) old.dispose();
  }

  /** @internal Frees the node once the tensor is disposed and no live node needs it. */
  _releaseGraphIfUnused(): void {
    if (this.isDisposed && this._uses === 0) freeNode(this, true);
  }

  /**
   * Replaces this tensor's data in place with `other`'s (same shape; cast to this dtype),
   * recording no graph: how optimizers write parameters after an update computed with
   * NDArray.elementwise. Shares other's storage (no copy); `other` stays owned by its caller.
   */
  assign(other: Tensor | NDArray): this {
    const src = other instanceof Tensor ? other.nd('assign') : other;
    if (!(src instanceof NDArray)) throw new ValueError('assign: expected a Tensor or an NDArray');
    const me = this.nd('assign');
    if (!shapesEqual(src.shape, me.shape))
      throw new ShapeError(
        `assign: got shape ${fmtShape(src.shape)}; expected this tensor's shape ${fmtShape(me.shape)}`,
      );
    if (src.backend !== me.backend)
      throw new ValueError(
        `assign: the new data lives on backend ${src.backend.name}; this tensor on ${me.backend.name}`,
      );
    this._replace(src.dtype === me.dtype ? alias(src) : src.cast(me.dtype));
    return this;
  }

  /** Frees the data (GPU buffer), the gradient and, unless still needed by a graph, the node. Idempotent. */
  dispose(): void {
    if (this._pending) {
      // fusion pass: a value never read is never computed
      this._shapeSeen = this._pending.shape;
      this._dtypeSeen = 'float32';
      this._pending.release();
      this._pending = null;
      leaveFrontier(this);
    } else {
      if (!this._nd) return;
      this._shapeSeen = this._nd.shape;
      this._dtypeSeen = this._nd.dtype;
      this._nd.dispose();
      this._nd = null;
    }
    this._grad?.dispose();
    this._grad = null;
    untrack(this, this._token);
    this._releaseGraphIfUnused();
  }

  /** A tensor sharing this data but cut from the graph (requiresGrad false). */
  detach(): Tensor {
    return new Tensor(alias(this.nd('detach')));
  }

  /** A copy of the data (its own contiguous buffer), differentiable. */
  clone(): Tensor {
    return S.clone(this);
  }

  // readback

  /** The elements in row-major order as a typed array (bool: Uint8Array of 0/1). */
  async data(): Promise<TypedArray> {
    const nd = this.nd('data');
    const d = await readAndCollect(nd.backend, nd.data()); // awaits collect when memory grew
    return d;
  }

  /** The elements as nested arrays (numbers, or booleans for bool tensors); a 0-d tensor gives a number. */
  async toArray(): Promise<NestedArray> {
    const nd = this.nd('toArray');
    const d = await readAndCollect(nd.backend, nd.data());
    return nest(d, nd.shape, nd.dtype === 'bool');
  }

  /** The single element of a one-element tensor. */
  async item(): Promise<number> {
    const nd = this.nd('item');
    if (nd.size !== 1)
      throw new ShapeError(
        `item: the tensor has shape ${fmtShape(nd.shape)} (${nd.size} elements); expected exactly one element`,
      );
    const d = await readAndCollect(nd.backend, nd.data());
    return d[0];
  }

  // backends (move.ts)

  /** The name of the backend this tensor lives on ('cpu' or 'webgpu'). */
  get device(): string {
    return this.nd('device').backend.name;
  }

  /**
   * This tensor on another backend (PyTorch's .to(device)): itself when already there, else a
   * copy as a new leaf with the same requiresGrad. Synchronous from the CPU backend; a tensor
   * on the GPU needs `await toAsync(...)`.
   */
  to(backend: BackendTarget): Tensor {
    return toBackend(this, backend, (nd, rg) => new Tensor(nd, { requiresGrad: rg }));
  }

  /** to() for any source backend (reads the data back when it lives on a GPU). */
  async toAsync(backend: BackendTarget): Promise<Tensor> {
    return toBackendAsync(this, backend, (nd, rg) => new Tensor(nd, { requiresGrad: rg }));
  }

  // printing (format.ts)

  private _formatInfo() {
    return { requiresGrad: this.requiresGrad, gradFn: this._leaf ? null : (this._node?.op ?? null) };
  }

  /**
   * PyTorch's repr with the values when they are on the host (the CPU backend): String(t),
   * `${t}`, console.log(t). A tensor on a GPU cannot be read synchronously: it says so and how
   * to read it (await t.print() or await t.toStringAsync()).
   */
  toString(): string {
    if (!this._nd) return `tensor(<disposed>, shape=${fmtShape(this._shapeSeen)}, dtype=${this._dtypeSeen})`;
    const host = readSync(this._nd, false);
    if (host) return formatTensor(host, this._nd.shape, this._nd.dtype, this._formatInfo());
    return formatPlaceholder(this._nd.shape, this._nd.dtype, this._nd.backend.name, this._formatInfo());
  }

  /** The values formatted as PyTorch prints them, read back from any backend. */
  async toStringAsync(): Promise<string> {
    const nd = this.nd('toStringAsync');
    return formatTensor(await this.data(), nd.shape, nd.dtype, this._formatInfo());
  }

  /** Reads the values back and console.log()s them (PyTorch's print(t)). */
  async print(): Promise<void> {
    // eslint-disable-next-line no-console
    console.log(await this.toStringAsync());
  }

  /** Node's console.log / util.inspect use this (the symbol is global; no Node import). */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  /**
   * JSON.stringify(t): dtype and shape, with the values only for a host tensor of at most
   * 1,000 elements (a GPU tensor, or a large one, never writes megabytes by accident).
   */
  toJSON(): { dtype: DType; shape: number[]; data?: NestedArray; note?: string } {
    if (!this._nd) return { dtype: this._dtypeSeen, shape: this._shapeSeen.slice(), note: 'disposed' };
    const nd = this._nd;
    const host = nd.size <= JSON_MAX_ELEMENTS ? readSync(nd, false) : null;
    if (host) return { dtype: nd.dtype, shape: nd.shape.slice(), data: nest(host, nd.shape, nd.dtype === 'bool') };
    return {
      dtype: nd.dtype,
      shape: nd.shape.slice(),
      note:
        nd.size > JSON_MAX_ELEMENTS
          ? `values omitted (${nd.size} elements); use await t.toArray()`
          : `values on the ${nd.backend.name} device; use await t.toArray()`,
    };
  }

  // autodiff

  /**
   * Computes d(this)/d(leaf) for every leaf that requires grad and adds it to leaf.grad.
   * A non-scalar tensor needs `grad` (the vector of the vector-Jacobian product).
   */
  backward(grad?: Tensor | NDArray, opts?: BackwardOptions): void {
    if (grad !== undefined && grad !== null && !(grad instanceof Tensor) && !(grad instanceof NDArray))
      throw typeErr('backward', 'the gradient', "a Tensor of the output's shape (or nothing for a scalar)", grad);
    const g = grad instanceof Tensor ? grad.nd('backward') : grad;
    runBackward(this, g, opts);
  }

  // tensor hooks and retained gradients
  private _hooks: TensorHook[] | null = null;
  private _retainsGrad = false;

  /**
   * PyTorch's register_hook: `fn` runs with this tensor's total gradient each time one is
   * computed for it (backward() or grad()), before it is used; returning a tensor of the same
   * shape replaces the gradient. Hooks run in registration order, under noGrad. Returns a
   * handle whose remove() unregisters the hook.
   */
  registerHook(fn: TensorHook): HookHandle {
    if (typeof fn !== 'function')
      throw new SurfTypeError(`registerHook: expected a function (grad) => Tensor | void; got ${typeof fn}`);
    if (!this._requiresGrad)
      throw new ValueError(
        `registerHook: this tensor of shape ${fmtShape(this._dims)} does not require grad, so no gradient will reach a hook (set requiresGrad on the leaves first)`,
      );
    (this._hooks ??= []).push(fn);
    return {
      remove: () => {
        const i = this._hooks?.indexOf(fn) ?? -1;
        if (i >= 0) this._hooks!.splice(i, 1);
      },
    };
  }

  /**
   * PyTorch's retain_grad: this non-leaf tensor keeps its gradient in `.grad` after
   * backward() (accumulating, as a leaf's). A no-op on leaves, which keep theirs anyway.
   */
  retainGrad(): this {
    if (!this._requiresGrad)
      throw new ValueError(
        `retainGrad: this tensor of shape ${fmtShape(this._dims)} does not require grad; there is no gradient to keep`,
      );
    if (!this._leaf) this._retainsGrad = true;
    return this;
  }

  /** Whether backward() keeps this tensor's gradient in `.grad` (leaves that require grad, and retainGrad()). */
  get retainsGrad(): boolean {
    return this._retainsGrad;
  }

  /** @internal True when the engine must hand this tensor's gradient to hooks or .grad. */
  get _observed(): boolean {
    return this._retainsGrad || (this._hooks !== null && this._hooks.length > 0);
  }

  /** @internal Runs the hooks on g (consumed; the result is returned) and keeps a retained copy. */
  _observe(g: NDArray, accumulate: boolean): NDArray {
    let cur = g;
    for (const fn of this._hooks ?? []) {
      const shown = new Tensor(alias(cur));
      let next: NDArray | null = null;
      noGrad(() =>
        tidy(() => {
          const r = fn(shown);
          if (r === undefined || r === null) return;
          if (!(r instanceof Tensor))
            throw new SurfTypeError(`registerHook: a hook returned ${typeof r}; expected a Tensor or nothing`);
          const rn = r.nd('registerHook');
          if (!shapesEqual(rn.shape, cur.shape))
            throw new ShapeError(
              `registerHook: a hook returned shape ${fmtShape(rn.shape)}; expected the gradient's shape ${fmtShape(cur.shape)}`,
            );
          next = rn.dtype === 'float32' ? alias(rn) : rn.cast('float32');
        }),
      );
      if (next) {
        cur.dispose();
        cur = next;
      }
    }
    if (this._retainsGrad && accumulate) this._accumulateGrad(alias(cur));
    return cur;
  }

  // elementwise (numbers broadcast; see dtypes.ts for promotion)

  add(o: Operand): Tensor {
    return A.add(this, o);
  }
  sub(o: Operand): Tensor {
    return A.sub(this, o);
  }
  mul(o: Operand): Tensor {
    return A.mul(this, o);
  }
  /** True division: int32 operands give float32. */
  div(o: Operand): Tensor {
    return A.div(this, o);
  }
  pow(o: Operand): Tensor {
    return A.pow(this, o);
  }
  maximum(o: Operand): Tensor {
    return A.maximum(this, o);
  }
  minimum(o: Operand): Tensor {
    return A.minimum(this, o);
  }
  clamp(min?: Operand | null, max?: Operand | null): Tensor {
    return A.clamp(this, min ?? undefined, max ?? undefined);
  }
  eq(o: Operand): Tensor {
    return A.eq(this, o);
  }
  ne(o: Operand): Tensor {
    return A.ne(this, o);
  }
  lt(o: Operand): Tensor {
    return A.lt(this, o);
  }
  le(o: Operand): Tensor {
    return A.le(this, o);
  }
  gt(o: Operand): Tensor {
    return A.gt(this, o);
  }
  ge(o: Operand): Tensor {
    return A.ge(this, o);
  }
  /** c ? a : b elementwise; c is a bool tensor. */
  static where(c: Tensor, a: Operand, b: Operand): Tensor {
    return A.where(c, a, b);
  }
  /** Converts to another dtype (float→int truncates toward zero); differentiable float→float only. */
  cast(dtype: DType): Tensor {
    return A.cast(this, dtype);
  }
  float(): Tensor {
    return A.cast(this, 'float32');
  }
  int(): Tensor {
    return A.cast(this, 'int32');
  }

  neg(): Tensor {
    return U.neg(this);
  }
  exp(): Tensor {
    return U.exp(this);
  }
  log(): Tensor {
    return U.log(this);
  }
  sqrt(): Tensor {
    return U.sqrt(this);
  }
  rsqrt(): Tensor {
    return U.rsqrt(this);
  }
  abs(): Tensor {
    return U.abs(this);
  }
  sin(): Tensor {
    return U.sin(this);
  }
  cos(): Tensor {
    return U.cos(this);
  }
  tanh(): Tensor {
    return U.tanh(this);
  }
  sigmoid(): Tensor {
    return U.sigmoid(this);
  }
  relu(): Tensor {
    return U.relu(this);
  }
  leakyRelu(negativeSlope = 0.01): Tensor {
    return U.leakyRelu(this, negativeSlope);
  }
  /** 'none': ½x(1 + erf(x/√2)) with the raw erf (PyTorch's formula); 'tanh': the tanh approximation. */
  gelu(approximate: 'none' | 'tanh' = 'none'): Tensor {
    return U.gelu(this, approximate);
  }
  softplus(beta = 1): Tensor {
    return U.softplus(this, beta);
  }

  // raw elementwise ops of the op table (core ops/table.ts)
  erf(): Tensor {
    return Special.erf(this);
  }
  log1p(): Tensor {
    return Special.log1p(this);
  }
  expm1(): Tensor {
    return Special.expm1(this);
  }
  floor(): Tensor {
    return Rounding.floor(this);
  }
  ceil(): Tensor {
    return Rounding.ceil(this);
  }
  /** Half to even (as PyTorch); `decimals` rounds to that many decimal places. */
  round(decimals = 0): Tensor {
    return Rounding.round(this, decimals);
  }
  trunc(): Tensor {
    return Rounding.trunc(this);
  }
  /** -1, 0 or 1; sign(NaN) = 0 as PyTorch. */
  sign(): Tensor {
    return Rounding.sign(this);
  }
  /** Python's % (torch.remainder): the result takes the divisor's sign. */
  remainder(o: Operand): Tensor {
    return A.remainder(this, o);
  }
  bitwiseAnd(o: Operand): Tensor {
    return Bitwise.bitwiseAnd(this, o);
  }
  bitwiseOr(o: Operand): Tensor {
    return Bitwise.bitwiseOr(this, o);
  }
  bitwiseXor(o: Operand): Tensor {
    return Bitwise.bitwiseXor(this, o);
  }
  /** x·σ(x) (swish). */
  silu(): Tensor {
    return U.silu(this);
  }

  // reductions: dim is a number, a list, or absent for all dims

  sum(dim?: Dims, keepdim = false): Tensor {
    return R.sum(this, dim, keepdim);
  }
  mean(dim?: Dims, keepdim = false): Tensor {
    return R.mean(this, dim, keepdim);
  }
  /**
   * max() is the largest element (ties share the gradient equally). max(dim, keepdim) is
   * PyTorch's torch.max(x, dim): { values, indices }, the gradient going to that index. A list
   * of dims reduces them all to the values (as amax).
   */
  max(): Tensor;
  max(dim: number, keepdim?: boolean): MinMaxResult;
  max(dim: readonly number[], keepdim?: boolean): Tensor;
  max(dim?: Dims, keepdim = false): Tensor | MinMaxResult {
    if (typeof dim === 'number') return maxDim(this, dim, keepdim);
    return R.max(this, dim, keepdim);
  }
  min(): Tensor;
  min(dim: number, keepdim?: boolean): MinMaxResult;
  min(dim: readonly number[], keepdim?: boolean): Tensor;
  min(dim?: Dims, keepdim = false): Tensor | MinMaxResult {
    if (typeof dim === 'number') return minDim(this, dim, keepdim);
    return R.min(this, dim, keepdim);
  }
  /** torch.amax: the largest values over dims (all by default); ties share the gradient equally. */
  amax(dim?: Dims, keepdim = false): Tensor {
    return R.max(this, dim, keepdim);
  }
  amin(dim?: Dims, keepdim = false): Tensor {
    return R.min(this, dim, keepdim);
  }
  /** Index (int32) of the first maximum along dim, or into the flattened tensor when dim is absent. */
  argmax(dim?: number, keepdim = false): Tensor {
    return R.argmax(this, dim, keepdim);
  }
  argmin(dim?: number, keepdim = false): Tensor {
    return R.argmin(this, dim, keepdim);
  }
  /** Variance with Bessel's correction by default (correction = 1), as torch.var. */
  var(dim?: Dims, keepdim = false, correction = 1): Tensor {
    return R.variance(this, dim, keepdim, correction);
  }
  std(dim?: Dims, keepdim = false, correction = 1): Tensor {
    return R.std(this, dim, keepdim, correction);
  }
  logsumexp(dim?: Dims, keepdim = false): Tensor {
    return logsumexp(this, dim, keepdim);
  }
  softmax(dim: number): Tensor {
    return softmax(this, dim);
  }
  logSoftmax(dim: number): Tensor {
    return logSoftmax(this, dim);
  }

  // shape (views: no copy unless strides cannot express the result)

  reshape(...shape: number[]): Tensor;
  reshape(shape: readonly number[]): Tensor;
  reshape(...args: (number | readonly number[])[]): Tensor {
    return S.reshape(this, shapeArgs('reshape', args));
  }
  view(...shape: number[]): Tensor;
  view(shape: readonly number[]): Tensor;
  view(...args: (number | readonly number[])[]): Tensor {
    return S.reshape(this, shapeArgs('view', args), 'view');
  }
  permute(...dims: number[]): Tensor;
  permute(dims: readonly number[]): Tensor;
  permute(...args: (number | readonly number[])[]): Tensor {
    return S.permute(this, shapeArgs('permute', args));
  }
  transpose(dim0: number, dim1: number): Tensor {
    return S.transpose(this, dim0, dim1);
  }
  /** All dims reversed (the matrix transpose for 2-d). */
  get T(): Tensor {
    return S.permute(
      this,
      this.shape.map((_, i) => this.ndim - 1 - i),
    );
  }
  /** Broadcasts size-1 dims (and new leading dims) to `shape`; -1 keeps a dim. */
  expand(...shape: number[]): Tensor;
  expand(shape: readonly number[]): Tensor;
  expand(...args: (number | readonly number[])[]): Tensor {
    return S.expand(this, shapeArgs('expand', args));
  }
  broadcastTo(shape: readonly number[]): Tensor {
    return S.expand(this, shape.slice(), 'broadcastTo');
  }
  /**
   * torch.nn.functional.pad: PyTorch's flat list, last dim first ([left, right, top, bottom,
   * ...]), with `{ mode: 'constant' | 'reflect' | 'replicate' | 'circular', value = 0 }`.
   */
  pad(padding: readonly number[], opts?: PadOptions): Tensor {
    return padOp(this, padding, opts);
  }
  narrow(dim: number, start: number, length: number): Tensor {
    return S.narrow(this, dim, start, length);
  }
  flip(dims: Dims): Tensor {
    return S.flip(this, dims);
  }
  squeeze(dim?: Dims): Tensor {
    return S.squeeze(this, dim);
  }
  unsqueeze(dim: number): Tensor {
    return S.unsqueeze(this, dim);
  }
  flatten(startDim = 0, endDim = -1): Tensor {
    return S.flatten(this, startDim, endDim);
  }
  contiguous(): Tensor {
    return S.contiguous(this);
  }
  static cat(tensors: readonly Tensor[], dim = 0): Tensor {
    return J.cat(tensors, dim);
  }
  static stack(tensors: readonly Tensor[], dim = 0): Tensor {
    return J.stack(tensors, dim);
  }

  /** Slices of dim `dim` picked by a 1-d int32 index (a tensor or a list): batching, embeddings. */
  indexSelect(dim: number, index: Tensor | readonly number[]): Tensor {
    return indexSelect(this, dim, index);
  }

  // indexing, gather/scatter, sort, scans, norms, in-place

  /**
   * PyTorch's t[...]: numbers, slices ('1:5:2' or {start, stop, step}), null (new dim), '...',
   * int32 tensors / number[] (integer-array indexing). See ops/index.ts and docs/api.md.
   */
  index(...args: IndexArg[]): Tensor {
    return indexOp(this, args);
  }
  /** t[..., start:end:step, ...] on one dim (negative bounds count from the end; step > 0). */
  slice(dim: number, start?: number | null, end?: number | null, step = 1): Tensor {
    return sliceOp(this, dim, start, end, step);
  }
  /** torch.gather: out[i][j] = x[i][index[i][j]] for dim 1; index is int32 with x's number of dims. */
  gather(dim: number, index: Tensor): Tensor {
    return gatherOp(this, dim, index);
  }
  /** torch.scatter (out of place): a copy with src (a tensor or a number) written at index along dim. */
  scatter(dim: number, index: Tensor, src: Tensor | number): Tensor {
    return scatterOp(this, dim, index, src);
  }
  /** torch.scatter_add (out of place): a copy with src added at index along dim (duplicates add up). */
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor {
    return scatterAddOp(this, dim, index, src);
  }
  /** value where the bool mask (broadcast to this shape) is true; keeps this dtype. */
  maskedFill(mask: Tensor, value: number | boolean | Tensor): Tensor {
    return maskedFillOp(this, mask, value);
  }
  /** Stable sort along dim (default last; NaN largest): { values, indices (int32) }. */
  sort(dim = -1, opts: { descending?: boolean } = {}): SortResult {
    return sortOp(this, dim, opts);
  }
  argsort(dim = -1, opts: { descending?: boolean } = {}): Tensor {
    return argsortOp(this, dim, opts);
  }
  /** The k largest (largest: false: smallest) along dim, sorted: { values, indices }. */
  topk(k: number, dim = -1, opts: { largest?: boolean } = {}): SortResult {
    return topkOp(this, k, dim, opts);
  }
  cumsum(dim: number): Tensor {
    return cumsumOp(this, dim);
  }
  /** Product over one dim, or of all elements when dim is absent. */
  prod(dim?: number, keepdim = false): Tensor {
    return prodOp(this, dim, keepdim);
  }
  /** Vector p-norm over dims (all by default): p a number, Infinity, -Infinity or 'fro'. */
  norm(p: NormOrder = 2, dim?: Dims, keepdim = false): Tensor {
    return normOp(this, p, dim, keepdim);
  }
  /** True where any element (over dims, all by default) is non-zero; a bool tensor. */
  any(dim?: Dims, keepdim = false): Tensor {
    return anyOp(this, dim, keepdim);
  }
  all(dim?: Dims, keepdim = false): Tensor {
    return allOp(this, dim, keepdim);
  }
  /** Tiles the tensor sizes[d] times along each dim (torch.Tensor.repeat). */
  repeat(...sizes: number[]): Tensor;
  repeat(sizes: readonly number[]): Tensor;
  repeat(...args: (number | readonly number[])[]): Tensor {
    return repeatOp(this, shapeArgs('repeat', args));
  }
  /** Views of `size` along dim (the last may be shorter), or of the listed sizes. */
  split(size: number | readonly number[], dim = 0): Tensor[] {
    return splitOp(this, size, dim);
  }
  chunk(chunks: number, dim = 0): Tensor[] {
    return chunkOp(this, chunks, dim);
  }
  triu(diagonal = 0): Tensor {
    return triuOp(this, diagonal);
  }
  tril(diagonal = 0): Tensor {
    return trilOp(this, diagonal);
  }

  // float checks, comparisons, scans, diagonals, logical ops
  /** True where NaN (bool). */
  isnan(): Tensor {
    return NF.isnan(this);
  }
  /** True where +inf or -inf (bool). */
  isinf(): Tensor {
    return NF.isinf(this);
  }
  /** True where neither NaN nor infinite (bool). */
  isfinite(): Tensor {
    return NF.isfinite(this);
  }
  /** NaN, +inf, -inf replaced (defaults 0, ±3.4028e38); the gradient is 0 at replaced elements. */
  nanToNum(opts?: NanToNumOptions): Tensor {
    return NF.nanToNum(this, opts);
  }
  /** |this − other| <= atol + rtol·|other| elementwise (bool; defaults rtol 1e-5, atol 1e-8). */
  isclose(other: Operand, opts?: IsCloseOptions): Tensor {
    return isCloseOp(this, other, opts);
  }
  /** Whether every element is close (reads one value back: await it). */
  allclose(other: Operand, opts?: IsCloseOptions): Promise<boolean> {
    return allCloseOp(this, other, opts);
  }
  /** Running product along dim; the gradient is exact where elements are 0. */
  cumprod(dim: number): Tensor {
    return cumprodOp(this, dim);
  }
  /** Shifts elements along dims with wrap-around (no dims: over the flattened tensor). */
  roll(shifts: number | readonly number[], dims?: number | readonly number[]): Tensor {
    return rollOp(this, shifts, dims);
  }
  /** 1-d: the matrix with this on diagonal `offset`; 2-d: that diagonal as a 1-d tensor. */
  diag(offset = 0): Tensor {
    return diagOp(this, offset);
  }
  /** The diagonal of dims dim1, dim2 (offset above it when > 0) as a new last dim (a copy). */
  diagonal(offset = 0, dim1 = 0, dim2 = 1): Tensor {
    return diagonalOp(this, offset, dim1, dim2);
  }
  /** Outer product of two 1-d tensors. */
  outer(other: Tensor): Tensor {
    return outerOp(this, other);
  }
  /** x·x. */
  square(): Tensor {
    return squareOp(this);
  }
  /** this + weight·(end − this). */
  lerp(end: Tensor, weight: Operand): Tensor {
    return lerpOp(this, end, weight);
  }
  logicalAnd(other: Operand): Tensor {
    return LO.logicalAnd(this, other);
  }
  logicalOr(other: Operand): Tensor {
    return LO.logicalOr(this, other);
  }
  logicalXor(other: Operand): Tensor {
    return LO.logicalXor(this, other);
  }
  logicalNot(): Tensor {
    return LO.logicalNot(this);
  }
  /** The distinct values, sorted (host-side: a Promise), optionally with inverse indices and counts. */
  unique(opts?: UniqueOptions): Promise<UniqueResult> {
    return uniqueOp(this, opts);
  }

  /**
   * @internal Bumped by every in-place op; a recorded op whose parent's version changed
   * refuses to run its backward (see node.ts).
   */
  _version = 0;

  add_(o: Operand): this {
    return Inplace.binary(this, 'add_', o);
  }
  sub_(o: Operand): this {
    return Inplace.binary(this, 'sub_', o);
  }
  mul_(o: Operand): this {
    return Inplace.binary(this, 'mul_', o);
  }
  div_(o: Operand): this {
    return Inplace.binary(this, 'div_', o);
  }
  clamp_(min?: Operand | null, max?: Operand | null): this {
    return Inplace.clampInPlace(this, min, max);
  }
  fill_(value: number | boolean): this {
    return Inplace.fill(this, value);
  }
  zero_(): this {
    return Inplace.fill(this, 0);
  }
  /** Copies src (broadcast to this shape, cast to this dtype) into this tensor. */
  copy_(src: Tensor): this {
    return Inplace.copy(this, src);
  }

  /**
   * @internal The in-place machinery: `f(old)` computes the new value from a stand-in tensor
   * that takes over this tensor's current value and history, so the recorded op's parent is
   * the old value, not this tensor; this tensor then takes the result's data and history.
   * In-place ops rebind this tensor only: other views of the same data keep the old values.
   */
  _inplace(op: string, f: (old: Tensor) => Tensor): this {
    const nd = this.nd(op);
    const grad = isGradEnabled();
    if (this._leaf && this._requiresGrad && grad) {
      throw new ValueError(
        `${op}: a leaf tensor that requires grad cannot be modified in place while grad is enabled (autograd needs its value); do it inside noGrad(), or use the out-of-place op`,
      );
    }
    const node = this._node;
    const old = new Tensor(alias(nd), node ? { node, untracked: true } : { untracked: true });
    // The stand-in inherits the node, whose parents already count this tensor's hold.
    if (node) for (const p of node.parents) if (p._node) p._uses--;
    let r: Tensor;
    try {
      r = f(old);
    } catch (e) {
      if (node) for (const p of node.parents) if (p._node) p._uses++;
      old._node = null;
      old.dispose();
      throw e;
    }
    this._node = null;
    const rn = r.nd(op);
    const bad = !shapesEqual(rn.shape, nd.shape)
      ? `shape ${fmtShape(rn.shape)} (expected this tensor's ${fmtShape(nd.shape)}; the other operand must broadcast to it)`
      : rn.dtype !== nd.dtype
        ? `dtype ${rn.dtype} (expected this tensor's ${nd.dtype}; PyTorch refuses the same cast)`
        : this._leaf && r._node
          ? 'a result that needs autograd history, which a tensor created without requiresGrad cannot hold (use the out-of-place op)'
          : null;
    if (bad) {
      r.dispose();
      this._node = old._node;
      if (old._node) {
        old._node = null;
      }
      old.dispose();
      throw new (bad.startsWith('dtype') ? DTypeError : bad.startsWith('shape') ? ShapeError : ValueError)(
        `${op}: the result has ${bad}`,
      );
    }
    // Take r's data and node without disposing them.
    this._nd = rn.view.isPlain && rn.storage.size === rn.size ? rn : rn.contiguous();
    if (this._nd !== rn) rn.dispose();
    r._nd = null;
    this._node = r._node;
    r._node = null;
    if (!this._leaf) this._requiresGrad = !!this._node;
    untrack(r, r._token);
    nd.dispose();
    old.dispose();
    this._version++;
    return this;
  }

  // linear algebra

  /** torch.matmul: batched with broadcast batch dims; a 1-d operand is a vector. */
  matmul(o: Tensor): Tensor {
    return matmul(this, o);
  }
  /** Inner product of two 1-d tensors. */
  dot(o: Tensor): Tensor {
    return dot(this, o);
  }
}

export function checkTensor(op: string, t: unknown, what = 'an operand'): Tensor {
  if (t instanceof Tensor) return t;
  throw typeErr(op, what, 'a Tensor', t);
}
