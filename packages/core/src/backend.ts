/**
 * The backend contract: everything a backend implements, in one file. It is deliberately
 * small (tinygrad's lesson): elementwise expressions, two reductions, matmul, a row gather,
 * and moving bytes in and out. Movement ops (reshape, permute, expand, pad, crop, flip) never
 * reach a backend: they are View changes in core, and kernels read inputs through the view.
 * Softmax, mean, losses, activations and every backward rule are built from these in the
 * frontend.
 */
import { DType, TypedArray } from './dtype';
import { Expr } from './expr';
import { View } from './view';
// conv: the parameter block of the contract's convolution.
import type { ConvParams } from './conv-params';
// pool: the parameter block of the contract's windowed pooling.
import type { PoolParams } from './pool-params';
import type { RandomParams } from './rng/draw';

/** A backend-owned flat buffer of `size` elements of `dtype`. Opaque to everyone else. */
export interface Storage {
  readonly backend: Backend;
  readonly size: number;
  readonly dtype: DType;
}

/** An operand: a storage read through a view. */
export interface Strided {
  readonly storage: Storage;
  readonly view: View;
}

export type ReduceOp = 'sum' | 'max';

// scatter and sort
/** How scatter combines a source element with what is already at its position. */
export type ScatterMode = 'set' | 'add';

/**
 * An elementwise expression a matmul applies to each product element before storing it (bias,
 * activation, scaling): input 0 is the product, input i >= 1 is `inputs[i-1]`, a view with the
 * output's shape (broadcast with stride 0 allowed, no mask). It must produce float32. Fusing it
 * saves a full write and read of the output per layer.
 */
// masked (padded) views reach only elementwise; NDArray copies them before reduce,
// matmul (and its epilogue) and gather, and backends reject them there (checkOperand with
// mask: false). A backend that cannot fuse an epilogue calls core's unfusedEpilogue.
export interface MatmulEpilogue {
  readonly expr: Expr;
  readonly inputs: readonly Strided[];
}

// attention (contract ops attention/attentionBackward)
/**
 * What attention applies to the scores s = scale·q·kᵀ: `causal` hides key j from query i when
 * j > i (top-left aligned, as PyTorch's is_causal), and `mask`, a [...batch, L, S] view
 * (stride 0 broadcast allowed, no view mask), is either float32 (added to s) or bool (true
 * where attention is allowed). A row with every key hidden gives an output of 0 and a
 * logsumexp of -Infinity (PyTorch's safe softmax), and no gradient.
 */
export interface AttentionOptions {
  readonly scale: number;
  readonly causal: boolean;
  readonly mask?: Strided;
}

export interface AttentionResult {
  /** softmax(s)·v, contiguous [...batch, L, Ev]. */
  readonly out: Storage;
  /** log Σ_j exp(s_ij) per query row, contiguous [...batch, L]: what backward needs to recompute p. */
  readonly lse: Storage;
}

export interface AttentionGrads {
  readonly dq: Storage;
  readonly dk: Storage;
  readonly dv: Storage;
}

export interface MemoryInfo {
  /** Buffers holding live data. */
  buffers: number;
  /** Bytes in those buffers. */
  bytes: number;
  /** Buffers kept for reuse (GPU pool); not live data. */
  pooledBuffers?: number;
  pooledBytes?: number;
}

export interface Backend {
  /** 'cpu' or 'webgpu'. */
  readonly name: string;
  /** Human-readable device, e.g. the adapter's name. */
  readonly description: string;

  /** Copies a typed array into a new storage (bool data is 0/1 bytes). */
  fromData(data: TypedArray, dtype: DType): Storage;

  /**
   * Evaluates each expression of `outs` at every index of `shape` and returns one new
   * contiguous storage per expression. `inputs[i]` is read through its view, which has
   * exactly `shape` (the caller has broadcast it: stride 0) and may have negative strides,
   * an offset and a mask (elements outside the mask read as 0). All outputs are written in
   * one pass, so a multi-output expression (an optimizer update) is one kernel.
   */
  elementwise(outs: readonly Expr[], inputs: readonly Strided[], shape: readonly number[]): Storage[];

  /**
   * Reduces `x` over `axes` (sorted, unique). The result is contiguous with the input's shape
   * where reduced axes have size 1. `x`'s view has no mask. Sum of an empty set is 0; max of
   * an empty set is -Infinity (float32) or the minimum int32.
   */
  reduce(op: ReduceOp, x: Strided, axes: readonly number[]): Storage;

  /**
   * Batched float32 matrix product as a fused multiply-add: a is [...batch, m, k], b is
   * [...batch, k, n] with identical batch dims (broadcast batches have stride 0), no masks;
   * the result is contiguous [...batch, m, n]. Transposed operands arrive as strides. An
   * epilogue, when given, is applied to every product element before it is stored.
   */
  matmul(a: Strided, b: Strided, epilogue?: MatmulEpilogue): Storage;

  // fusion pass: ops whose kernel runs later still fail at the call
  /**
   * Optional. Throws the error that making an output of `size` elements of `dtype` for `op`
   * would raise now (backend destroyed, device lost, over the buffer limit), running nothing.
   * Autograd calls it when it defers a matmul (its pending results), so errors stay eager.
   */
  checkOutput?(op: string, dtype: DType, size: number): void;

  /**
   * Rows of `x` picked along `axis` by `idx` (int32, 1-d, no mask): the result is contiguous
   * with x's shape where dim `axis` becomes idx's length. Indices outside [0, size) give 0 in
   * every element of that slice (the frontend validates indices it knows on the host).
   */
  gather(x: Strided, axis: number, idx: Strided): Storage;

  // attention
  /**
   * Fused scaled-dot-product attention: q [...batch, L, E], k [...batch, S, E], v [...batch,
   * S, Ev], float32, identical batch dims (stride 0 allowed), no view masks. Never stores the
   * L x S scores: a row-wise online softmax over blocks of keys.
   */
  attention(q: Strided, k: Strided, v: Strided, opts: AttentionOptions): AttentionResult;

  /**
   * Gradients of `attention` for the output gradient gOut [...batch, L, Ev], given its
   * forward result (out, lse as returned, read through the views given). Recomputes the
   * probabilities block by block; the mask gets no gradient. Results are contiguous.
   */
  attentionBackward(
    q: Strided,
    k: Strided,
    v: Strided,
    out: Strided,
    lse: Strided,
    gOut: Strided,
    opts: AttentionOptions,
  ): AttentionGrads;
  // scatter and sort
  /**
   * A copy of `base` (contiguous, base's shape and dtype) where each `src[i]` is written
   * ('set') or added ('add') at the row-major flat position `idx[i]` of base's shape. idx is
   * int32 and 1-d, src is 1-d with idx's length and base's dtype; neither has a mask.
   * Positions outside [0, size) are skipped. 'add' sums every duplicate (float32 in no fixed
   * order); for 'set' with duplicates one of them wins. 'add' does not take bool.
   */
  scatter(mode: ScatterMode, base: Strided, idx: Strided, src: Strided): Storage;

  /**
   * Sorts every row along the LAST axis of `x` (no mask): returns [values, indices], both
   * contiguous with x's shape (values in x's dtype, indices int32 positions in the row). The
   * order is stable (equal keys keep their order, also when descending) and NaN sorts as the
   * largest float. bool is not taken (cast to int32 first).
   */
  sort(x: Strided, descending: boolean): [Storage, Storage];
  /**
   * A contiguous array of `shape` drawn from Philox4x32-10 (core/src/rng/draw.ts says what each
   * element is, bit for bit): float32 for 'uniform' and 'normal', int32 for 'int'. `state` is
   * a plain int32 [4] view (key, 64-bit offset of element 0) that the kernel reads on the
   * device, so the same call with another state's storage draws other values.
   */
  random(state: Strided, shape: readonly number[], params: RandomParams): Storage;
  // conv
  /**
   * Convolution over 1 or 2 spatial dims (see ConvParams in conv.ts for the exact sum): x is
   * float32 [N, C, ...in], w is [O, C/groups, ...k], both unmasked views with any strides; the
   * result is contiguous [N, O, ...out]. Forward, both gradients and transposed convolution
   * are all this op (lhsDilation, negative padding). The epilogue is as for matmul, with
   * input 0 the conv result and inputs viewed at the output shape.
   */
  conv(x: Strided, w: Strided, params: ConvParams, epilogue?: MatmulEpilogue): Storage;

  /**
   * Windowed max or average pooling of x [N, C, H, W] (float32, no view mask, any strides;
   * see PoolParams in pool.ts): returns the contiguous [N, C, oH, oW] result and, for 'max',
   * the int32 tap index of each window's first maximum (null for 'avg').
   */
  pool2d(x: Strided, params: PoolParams): [Storage, Storage | null];

  /**
   * The gradient of `pool2d` for gy [N, C, oH, oW] (and max's tap indices `arg`): contiguous
   * float32 of `inShape`, each element the sum of what the windows holding it send back.
   */
  pool2dBackward(gy: Strided, arg: Strided | null, params: PoolParams, inShape: readonly number[]): Storage;

  /** Reads a storage back. Waits for all queued work that writes it. */
  read(s: Storage): Promise<TypedArray>;

  /** Frees a storage (GPU: returns its buffer to the pool). Idempotent. */
  dispose(s: Storage): void;

  // jit: replays write their results into the storages the eager trace left behind
  /**
   * Optional. Moves `src`'s data into `dst` (same dtype and size), freeing what `dst` held;
   * `src` is left disposed. Returns false (and disposes `src`) when `dst` was already freed.
   * Work queued before the call that reads `dst` still sees its old data.
   */
  adopt?(dst: Storage, src: Storage): boolean;

  /**
   * Optional (jit replay below the contract). Compiles one recorded step into a program the
   * backend runs by itself (see ReplayRecipe); null when it cannot, and jit then re-issues the
   * recorded calls through this contract as before.
   */
  compileReplay?(recipe: ReplayRecipe): ReplayProgram | null;
  /**
   * Optional (jit merges an optimizer's per-parameter updates into one call). Evaluates each
   * group exactly as elementwise(group.outs, group.inputs, group.shape) would, returning each
   * group's new storages in order; a backend may issue several groups of one expression
   * structure as one kernel. Groups are independent (each only reads storages that exist
   * before the call).
   */
  elementwiseGroups?(groups: readonly ElementwiseGroup[]): Storage[][];

  /**
   * Optional, for backends whose data cannot be read without a stall (a GPU): a device-side
   * assert that every element of the 1-d int32 `idx` lies in [lo, hi). It queues the check
   * and returns; a failure raises a ValueError naming `site` at the backend's next read() or
   * sync(). Backends without it have their callers check the values on the host at once.
   */
  checkIndices?(idx: Strided, lo: number, hi: number, site: { op: string; name: string; range: string }): void;

  /**
   * Optional: softmax cross-entropy's forward rows in one pass (autograd uses it where present,
   * else the composite of max, exp, sum and an elementwise term; checked by
   * core's checkCrossEntropyRowsArgs). For logits z [N, C] float32 and class indices y [N]
   * int32 it returns [m, s, rows]: m [N, 1] the row max; s [N, 1] = Σ_j exp(z_ij − m̃_i) with
   * m̃ = m where finite, else 0; rows [N] = scale·Σ_j w_ij·(log s_i + m̃_i − z_ij), w the
   * smoothed one-hot ((1 − ε)·[j = y_i] + ε/C; only the target column when ε = 0). A row whose
   * index lies outside [0, C) is NaN and fails the device-side check `site` (as checkIndices).
   * With `total`, a backend may return a fourth storage [1], Σ_i rows_i (a loss's mean or sum
   * in the same pass); the caller sums the rows itself when it is absent.
   */
  crossEntropyRows?(z: Strided, y: Strided, opts: CrossEntropyRowsOptions): Storage[];

  /** Submits queued work (GPU); a no-op on synchronous backends. */
  flush(): void;

  /**
   * Optional. Readbacks issued whose data has not arrived yet. jit submits a replay at once while
   * one waits (the loss of step N read during step N+1), so the GPU runs step N+1 meanwhile.
   */
  readsInFlight?(): number;

  /** Resolves once all submitted work has finished. */
  sync(): Promise<void>;

  memory(): MemoryInfo;

  /** Releases the device. Using the backend afterwards raises a DisposedError/DeviceLostError. */
  destroy(): void;
}

/** One evaluation of Backend.elementwiseGroups: elementwise's three arguments. */
export interface ElementwiseGroup {
  readonly outs: readonly Expr[];
  readonly inputs: readonly Strided[];
  readonly shape: readonly number[];
}

// jit: compiled replays (Backend.compileReplay)
/**
 * What jit hands a backend to compile a recorded step. The step's host-side values that change
 * per call are numbered in record order: dynamic constants (float32 scalars inside expressions:
 * a scheduled learning rate, Adam's bias corrections) and dynamic data (host arrays uploaded
 * afresh per call: random numbers). `issue` runs the step's backend calls once, with no host
 * effects and no adopt, on the given inputs and values, so the backend can watch what they do
 * (it may call it more than once, with probe values, to see where each value lands).
 */
export interface ReplayRecipe {
  /** The recorded call's arguments (the program binds copies of them: same dtype and size). */
  readonly inputs: readonly Storage[];
  /** Storages the step reads that exist before it (parameters, optimizer state). */
  readonly fixed: readonly Storage[];
  readonly constDTypes: readonly DType[];
  /** One recorded array per dynamic data value (its type and length). */
  readonly dataTemplates: readonly TypedArray[];
  /** State the step replaces, in order: each gets the matching `issue` result `adopt[i]`. */
  readonly adoptTargets: readonly Storage[];
  issue(
    inputs: readonly Storage[],
    consts: readonly number[],
    data: readonly TypedArray[],
  ): { outputs: Storage[]; adopt: Storage[] };
}

/** A compiled step (Backend.compileReplay). */
export interface ReplayProgram {
  /** Whether it still holds: the state it binds was neither freed nor replaced since compiling. */
  ready(): boolean;
  /**
   * Runs the step on `inputs` with this call's dynamic values; returns new output storages
   * (the caller's) and, per adopt target that was freed meanwhile, a new storage with its value
   * (null where the target was live and was written in place, or where `rebindable[i]` is false).
   */
  run(
    inputs: readonly Storage[],
    consts: readonly number[],
    data: readonly TypedArray[],
    rebindable: readonly boolean[],
  ): { outputs: Storage[]; rebound: (Storage | null)[] };
  /** Frees what the program owns. */
  dispose(): void;
}

/**
 * crossEntropyRows' options. `ignoreIndex`: a row whose target equals it is left out (PyTorch's
 * ignore_index): its loss is 0, its index is not range-checked, and with `meanOverKept` the
 * total is divided by the number of rows kept (scale then applies on top, usually 1); a
 * backend that returns that total (both of Surf's do) also writes the kept count after the
 * rows' sums s (the s storage then holds N + 1 floats).
 */
export interface CrossEntropyRowsOptions {
  smoothing: number;
  scale: number;
  site: { op: string; name: string; range: string };
  total?: boolean;
  ignoreIndex?: number;
  meanOverKept?: boolean;
}
