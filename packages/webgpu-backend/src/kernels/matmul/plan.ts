import { DType, Expr, collapseDims, exprInputs, exprKey } from '@surf/core';
import type { PooledBuffer } from '../../pool';
import { operandNames } from '../program';

/** Parameter names of epilogue input j. */
export const epiNames = operandNames('e', ['Offset', 'BatchStrides', 'RowStride', 'ColStride'] as const);

/**
 * Tiled matmul, the host-side plan. A workgroup computes a tileM×tileN block of C; each of its
 * (tileM/threadM)·(tileN/threadN) threads owns a threadM×threadN register tile. Per step of
 * tileK, the workgroup stages A's tileM×tileK and B's tileK×tileN blocks in workgroup memory
 * (A transposed, so a thread's rows are adjacent), then every thread does threadM·threadN
 * fused multiply-adds per k from registers. Global loads are vec4 when the operand is
 * contiguous along the loaded dim and 4-aligned; workgroup reads are vec4 for B (threadN a
 * multiple of 4) and for A (threadM a multiple of 4, `vecA`). Edges (any m, n, k) are
 * handled by bounds checks in the loads and the store. Any strides (transposes, broadcast
 * batches with stride 0) are read directly. A tile-aligned problem over contiguous operands
 * takes the fixed path instead (`fixed`): its sizes and strides are compiled in and its loads
 * and stores have no bounds checks. An optional epilogue expression is applied to
 * each product element before the store (bias, activation) so it costs no extra pass.
 *
 * The plan holds every decision the WGSL depends on (and so the pipeline's cache key); the
 * shader text is in matmul/wgsl.ts, the dispatch and its parameters in matmul.ts.
 */
export interface MatmulConfig {
  tileM: number;
  tileN: number;
  tileK: number;
  threadM: number;
  threadN: number;
  /** Use vec4 global loads and stores when the operands allow it. */
  vec4: boolean;
  /**
   * Unroll the tileK loop in the generated code (default true). Register-tile loops are
   * always unrolled. Off, shaders are far smaller: software adapters compile a fully
   * unrolled 64x64x32 kernel in seconds.
   */
  unroll?: boolean;
  /** Read A's register column from workgroup memory as vec4s (default true; needs threadM % 4 = 0). */
  vecA?: boolean;
  /**
   * Floats of padding after each k-row of the staged A tile (default 0; a multiple of 4 keeps
   * vec4 reads legal). Spreads the transposing stores of a k-major A over memory banks.
   */
  padA?: number;
  /**
   * A thread's column groups of 4 lie tileN/threadN·4 apart instead of side by side (default
   * false), so the threads of a warp read consecutive vec4s of the B tile.
   */
  interleave?: boolean;
  /**
   * Apply an epilogue in a second, rolled loop over the just-stored tile instead of in the
   * store itself. Frees the accumulators' registers before the epilogue runs. Default: true
   * for register tiles of 32 or more elements.
   */
  epilogueAfter?: boolean;
  /**
   * Stage the tiles per thread (A as one row of k-steps per thread row, B as one per thread
   * column, B's padded to an odd number of vec4s) and read them through a pointer taken once,
   * at constant indices (default false; needs threadM and threadN multiples of 4, ignores
   * padA). WebGPU's robustness then has no index to clamp in the inner loop.
   */
  rows?: boolean;
  /**
   * Two staged buffers (needs `rows`): the next k-step's tiles are read into registers before
   * this step's multiply-adds and stored into the other buffer after them, so global latency
   * overlaps compute and each step has one barrier (default false).
   */
  doubleBuffer?: boolean;
  /**
   * Lay a warp's 32 threads out as `32/warpCols` thread rows by `warpCols` thread columns
   * (needs `rows`; tileN/threadN a multiple of warpCols, tileM/threadM of 32/warpCols).
   * Default: thread t is column t % (tileN/threadN), so a warp of a 16-column tile spans 2
   * thread rows and reads 16 distinct vec4s of B per step. With 8: 4 rows by 8 columns, 8 B
   * vec4s and 4 A vec4s, a quarter of the workgroup-memory wavefronts for B. A's per-thread
   * rows are then padded to an odd number of vec4s, so the warp's thread rows hit distinct banks.
   */
  warpCols?: number;
  /**
   * Permute the k-rows inside each staged A row (needs `rows`): k-row kk goes to slot
   * kk ^ ((kk >> 2) & 3). A k-major A is loaded as vec4s along k and stored transposed, so
   * the threads of one store write k-rows 4 apart, which land on one bank; the permutation
   * spreads them over four. The inner loop's reads stay at constant indices.
   */
  swizzleA?: boolean;
  /**
   * The aligned fast path (default true): when m, n and k are multiples of the tile and A and
   * B are contiguous (row-major or transposed), the shader is compiled for that shape: sizes
   * and strides are constants and the loads and stores have no bounds checks. Other problems
   * take the general kernel. Each qualifying shape is its own pipeline.
   */
  fixed?: boolean;
  /**
   * Split k over this many chunks (default 1: no split), for problems whose output alone
   * leaves the GPU mostly idle while each workgroup walks a long k. Each (tile, chunk)
   * workgroup writes its partial product to a scratch buffer; a second kernel
   * (matmul/split-k.ts) sums the chunks in order and applies the epilogue to the sum. The
   * chunks hold whole k-steps, so fewer are made when k has fewer than 2 steps per chunk;
   * a split whose partial products exceed one storage binding runs whole (matmul.ts).
   */
  splitK?: number;
}

export interface MatmulOperand {
  buf: PooledBuffer;
  offset: number;
  /** Strides of the collapsed batch dims (shared shape), then rows, then cols. */
  batchStrides: number[];
  rowStride: number;
  colStride: number;
}

/** A strided view of C's shape read by the epilogue (batch strides over the collapsed batch dims; 0 = broadcast). */
export interface MatmulEpilogueInput extends MatmulOperand {
  dtype: DType;
}

/** The product-element epilogue: input 0 is the product, inputs 1.. are strided views of C. */
export interface MatmulEpilogueDesc {
  expr: Expr;
  inputs: MatmulEpilogueInput[];
}

/** One matmul to record: C[batch, m, n] = A[batch, m, k] · B[batch, k, n] (then the epilogue). */
export interface MatmulProblem {
  a: MatmulOperand;
  b: MatmulOperand;
  /** The collapsed batch shape every operand's batchStrides walk. */
  batchShape: number[];
  m: number;
  n: number;
  k: number;
  out: PooledBuffer;
  epi?: MatmulEpilogueDesc;
}

export interface MatmulPlan {
  readonly cfg: MatmulConfig;
  /** Tile extents (tileM, tileN, tileK), register tile (threadM, threadN). */
  readonly TM: number;
  readonly TN: number;
  readonly TK: number;
  readonly RM: number;
  readonly RN: number;
  /** Threads along n and m, threads per workgroup. */
  readonly TX: number;
  readonly TY: number;
  readonly NT: number;
  /** Collapsed batch rank. */
  readonly br: number;
  /** A is read along k (else along m); B along n (else along k). */
  readonly aKMajor: boolean;
  readonly bNMajor: boolean;
  /** vec4 global loads of A and B; vec4 C stores. */
  readonly aVec: boolean;
  readonly bVec: boolean;
  readonly cVec: boolean;
  /** vec4 staged tiles (workgroup memory) for A and B. */
  readonly vecA: boolean;
  readonly vecB: boolean;
  readonly padA: number;
  /** k-row pitch of the staged A tile. */
  readonly TMP: number;
  readonly inter: boolean;
  /** Per-thread staged rows (see MatmulConfig.rows) and their lengths in vec4s. */
  readonly rows: boolean;
  readonly aRowLen: number;
  readonly bRowLen: number;
  /** Thread columns per warp (0: the linear layout, see MatmulConfig.warpCols) and the A slot permutation. */
  readonly warpCols: number;
  readonly swizzleA: boolean;
  /** Double-buffered staged tiles (see MatmulConfig.doubleBuffer; only with rows). */
  readonly dbuf: boolean;
  /** The aligned fast path (see MatmulConfig.fixed): the problem's m, n, k are compiled in. */
  readonly fixed: boolean;
  /** k-chunks (1: no split) and the k-steps of tileK in each (the last may hold fewer). */
  readonly splits: number;
  readonly chunkSteps: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** A's and B's row and column strides (constants of the fixed shader). */
  readonly aStrides: [number, number];
  readonly bStrides: [number, number];
  readonly unroll: boolean;
  /** The epilogue runs after the store (a rolled loop) rather than in it. */
  readonly after: boolean;
  /** The epilogue this kernel applies (none when split: the sum kernel applies `splitEpi`). */
  readonly epi?: MatmulEpilogueDesc;
  readonly splitEpi?: MatmulEpilogueDesc;
  /** Epilogue inputs the expression reads (indices into epi.inputs), ascending. */
  readonly eIdx: number[];
  /** Binding (among the epilogue's distinct buffers) of each read epilogue input. */
  readonly eBind: number[];
  readonly eBufs: PooledBuffer[];
  readonly eDT: DType[];
  /** The epilogue's constants, in the order exprKey numbered them (parameters, not code). */
  readonly consts: { value: number; dtype: DType }[];
  readonly key: string;
}

/**
 * Drops size-1 batch dims and merges adjacent ones that every operand (A, B, epilogue views)
 * walks as one run, so the kernel splits the batch index into as few digits as possible.
 */
export function collapseBatch(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  // core's one collapse routine (ops/lower.ts), the one the elementwise generators use.
  const c = collapseDims(
    shape,
    strides.map((s) => ({ strides: s, mask: null })),
  );
  return { shape: c.shape, strides: c.ops.map((o) => o.strides) };
}

/** Every structural decision for `pr` under `cfg`. */
export function planMatmul(cfg: MatmulConfig, pr: MatmulProblem): MatmulPlan {
  const { a, b, m, n, k } = pr;
  const { tileM: TM, tileN: TN, tileK: TK, threadM: RM, threadN: RN } = cfg;
  const { splits, chunkSteps } = splitOf(cfg, k);
  // Split: this kernel stores plain partial sums; the epilogue runs after the chunks are summed.
  const epi = splits > 1 ? undefined : pr.epi;
  const TX = TN / RN;
  const TY = TM / RM;
  const br = pr.batchShape.length;
  const aligned = (o: MatmulOperand, along: 'row' | 'col', len: number) => {
    const other = along === 'col' ? o.rowStride : o.colStride;
    const own = along === 'col' ? o.colStride : o.rowStride;
    return (
      cfg.vec4 &&
      own === 1 &&
      len % 4 === 0 &&
      o.offset % 4 === 0 &&
      other % 4 === 0 &&
      o.batchStrides.every((s) => s % 4 === 0)
    );
  };
  // A is loaded along k (its cols) or along m (its rows) — whichever is contiguous in memory.
  const aKMajor = Math.abs(a.colStride) <= Math.abs(a.rowStride);
  const bNMajor = Math.abs(b.colStride) <= Math.abs(b.rowStride);
  const aVec = aKMajor ? aligned(a, 'col', k) : aligned(a, 'row', m);
  const bVec = bNMajor ? aligned(b, 'col', n) : aligned(b, 'row', k);
  const vecB = RN % 4 === 0;
  const rows = !!cfg.rows && vecB && RM % 4 === 0;
  const padA = rows ? 0 : (cfg.padA ?? 0);
  const dbuf = rows && !!cfg.doubleBuffer;
  const warpCols = rows ? warpColsOf(cfg) : 0;
  const swizzleA = rows && !!cfg.swizzleA;
  const TMP = TM + padA;
  const vecA = cfg.vecA !== false && RM % 4 === 0 && TMP % 4 === 0;
  const inter = !!cfg.interleave && vecB;
  const after = !!epi && (cfg.epilogueAfter ?? RM * RN >= 32);
  const cVec = cfg.vec4 && vecB && n % 4 === 0;
  const unroll = cfg.unroll !== false;
  // A contiguous [rows, cols] operand, row-major or transposed: its strides follow from the
  // shape, so the shape in the key names them.
  const dense = (o: MatmulOperand, r: number, c: number) =>
    (o.rowStride === c && o.colStride === 1) || (o.rowStride === 1 && o.colStride === r);
  const fixed = cfg.fixed !== false && m % TM === 0 && n % TN === 0 && k % TK === 0 && dense(a, m, k) && dense(b, k, n);

  const { eIdx, eBind, eBufs, eDT, consts, eKey } = planEpilogue(epi);
  const key = `mm|${TM},${TN},${TK},${RM},${RN}${unroll ? 'u' : 'r'}${vecA ? 'A' : ''}${padA ? `p${padA}` : ''}${inter ? 'i' : ''}${rows ? 'w' : ''}${warpCols ? `l${warpCols}` : ''}${swizzleA ? 'z' : ''}${dbuf ? 'd' : ''}${after ? 'x' : ''}|b${br}|a${aKMajor ? 'k' : 'm'}${aVec ? 'v' : ''}|b${bNMajor ? 'n' : 'k'}${bVec ? 'v' : ''}|c${cVec ? 'v' : ''}${fixed ? `|f${m},${n},${k}` : ''}${splits > 1 ? `|s${fixed ? chunkSteps : ''}` : ''}${eKey}`;
  return {
    cfg,
    TM,
    TN,
    TK,
    RM,
    RN,
    TX,
    TY,
    NT: TX * TY,
    br,
    aKMajor,
    bNMajor,
    aVec,
    bVec,
    cVec,
    vecA,
    vecB,
    padA,
    TMP,
    inter,
    unroll,
    after,
    rows,
    aRowLen: warpCols ? ((TK * RM) / 4) | 1 : (TK * RM) / 4,
    bRowLen: ((TK * RN) / 4) | 1,
    dbuf,
    warpCols,
    swizzleA,
    fixed,
    splits,
    chunkSteps,
    splitEpi: splits > 1 ? pr.epi : undefined,
    m,
    n,
    k,
    aStrides: [a.rowStride, a.colStride],
    bStrides: [b.rowStride, b.colStride],
    epi,
    eIdx,
    eBind,
    eBufs,
    eDT,
    consts,
    key,
  };
}

/**
 * The warp layout `cfg.warpCols` asks for, or 0 (the linear layout) when it does not fit the
 * tile: 32 threads must make whole thread rows of the warp and whole warps of the tile.
 */
export function warpColsOf(cfg: MatmulConfig): number {
  const w = cfg.warpCols ?? 0;
  const TX = cfg.tileN / cfg.threadN,
    TY = cfg.tileM / cfg.threadM;
  return w > 0 && w <= 32 && 32 % w === 0 && TX % w === 0 && TY % (32 / w) === 0 ? w : 0;
}

/**
 * k-chunks of `cfg.splitK` over k: whole tileK steps, at least 2 per chunk (a chunk of one
 * step costs a partial tile's store and re-read for one step of work); the count is what
 * that rounding leaves, so no chunk is empty.
 */
export function splitOf(cfg: MatmulConfig, k: number): { splits: number; chunkSteps: number } {
  const steps = Math.ceil(k / cfg.tileK);
  const want = Math.min(Math.floor(cfg.splitK ?? 1), Math.floor(steps / 2));
  if (want <= 1) return { splits: 1, chunkSteps: steps };
  const chunkSteps = Math.ceil(steps / want);
  return { splits: Math.ceil(steps / chunkSteps), chunkSteps };
}

/** An epilogue's bindings: each distinct (buffer, dtype) once, and its pipeline-key part. */
export interface EpiloguePlan {
  /** Inputs the expression reads (indices into epi.inputs), ascending. */
  eIdx: number[];
  /** Binding (among the distinct buffers) of each read input. */
  eBind: number[];
  eBufs: PooledBuffer[];
  eDT: DType[];
  /** The expression's constants, in the order exprKey numbered them. */
  consts: { value: number; dtype: DType }[];
  eKey: string;
}

export function planEpilogue(epi: MatmulEpilogueDesc | undefined): EpiloguePlan {
  const eUsed = epi ? exprInputs(epi.expr) : new Set<number>();
  const r: EpiloguePlan = { eIdx: [], eBind: [], eBufs: [], eDT: [], consts: [], eKey: '' };
  if (!epi) return r;
  epi.inputs.forEach((x, j) => {
    if (!eUsed.has(j + 1)) return;
    let q = r.eBufs.findIndex((bb, i) => bb === x.buf && r.eDT[i] === x.dtype);
    if (q < 0) {
      q = r.eBufs.length;
      r.eBufs.push(x.buf);
      r.eDT.push(x.dtype);
    }
    r.eBind[j] = q;
    r.eIdx.push(j);
  });
  r.eKey = `|e${exprKey(epi.expr, r.consts)}|${epi.inputs.map((x, j) => (eUsed.has(j + 1) ? `${x.dtype[0]}${r.eBind[j]}` : '_')).join('')}`;
  return r;
}
