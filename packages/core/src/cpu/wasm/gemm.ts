import { Arena } from './arena';
import { wordAt } from './address';
import { DEFAULT_GEMM, FMA_GEMM, GemmShape, buildGemmModule } from './gemm-kernel';
import { buildPackModule } from './pack-kernel';
import { hasRelaxedSimd, hasWasmSimd } from './simd';
import type { ThreadPool } from '../threads/pool';
import { planGemm, splitRange } from '../threads/split';

type PackFn = (src: number, rs: number, cs: number, dst: number, rows: number, w: number, wp: number) => void;
type RowsFn = (
  a: number,
  rsA: number,
  csA: number,
  b: number,
  ldb: number,
  c: number,
  ldc: number,
  kc: number,
  first: number,
  m: number,
) => void;

/** One f32 matrix operand: element (i, j) is data[off + i·rs + j·cs]. */
export interface MatRef {
  data: Float32Array;
  off: number;
  rs: number;
  cs: number;
}

const align16 = (bytes: number) => (bytes + 15) & ~15;
/** Elements of B from which its packing is split across threads (the product is then big too). */
const PACK_SPLIT = 1 << 15;
const roundUp4 = (n: number) => (n + 3) & ~3;

/**
 * Runs f32 matmuls with the generated WebAssembly SIMD kernels. Operands are copied into one
 * linear memory that grows on demand and is reused across calls: A as-is when its rows or
 * its columns are contiguous (the kernel reads either layout), otherwise packed row-major;
 * B as-is when it is row-major and A is short, otherwise packed into column panels; C is
 * computed there and copied out.
 */
export class WasmGemm {
  private readonly rows: RowsFn[] = [];
  /** The rows modules and their bytes, by nv: worker threads instantiate the same ones. */
  private readonly rowsMods: { mod: WebAssembly.Module; bytes: Uint8Array }[] = [];
  private readonly pack: PackFn;
  private readonly packMod: { mod: WebAssembly.Module; bytes: Uint8Array };
  /** B panel width in columns. */
  private readonly nr: number;
  /** k steps per block: a kc × nr panel of B and an m × kc block of A stay in cache. */
  private readonly kc: number;
  // What the A and B regions hold, so a broadcast batch is copied once.
  private lastA = '';
  private lastB = '';
  private lastAData: Float32Array | null = null;
  private lastBData: Float32Array | null = null;

  private constructor(
    readonly shape: GemmShape,
    kc: number,
    private readonly directB: boolean,
    readonly arena: Arena,
  ) {
    this.nr = 4 * shape.nv;
    this.kc = kc;
    for (let nv = 1; nv <= shape.nv; nv++) {
      const bytes = buildGemmModule(shape, nv);
      const mod = new WebAssembly.Module(bytes);
      this.rowsMods[nv] = { mod, bytes };
      this.rows[nv] = new WebAssembly.Instance(mod, { env: { memory: this.arena.memory } }).exports.rows as RowsFn;
    }
    const packBytes = buildPackModule();
    this.packMod = { mod: new WebAssembly.Module(packBytes), bytes: packBytes };
    this.pack = new WebAssembly.Instance(this.packMod.mod, { env: { memory: this.arena.memory } }).exports
      .pack as PackFn;
  }

  /** The kernels, or null where WebAssembly SIMD is missing or the module does not compile. */
  static create(shape?: Partial<GemmShape>, kc = 256, directB = true, arena?: Arena): WasmGemm | null {
    // Fused multiply-add (relaxed SIMD) where the engine has it: the 6 × 8 kernel runs 1.3×
    // the mul + add 4 × 12 one. Products then round once per term (or twice where the hardware
    // has no FMA), so bits may differ between machines; every thread count still agrees.
    const s = { ...((shape?.fma ?? hasRelaxedSimd()) ? FMA_GEMM : DEFAULT_GEMM), ...shape };
    if (!hasWasmSimd() || (s.fma && !hasRelaxedSimd())) return null;
    try {
      return new WasmGemm(s, kc, directB, arena ?? new Arena());
    } catch {
      return null;
    }
  }

  /** Forget cached operands: call when a new matmul starts (inputs may be new arrays). */
  reset(): void {
    this.lastAData = null;
    this.lastBData = null;
  }

  /**
   * Byte addresses of A, B, C and B's staging copy (the source of the wasm packer) for a
   * product, in the arena's scratch, and the bytes they need.
   */
  private layout(m: number, n: number, k: number): { aAt: number; bAt: number; cAt: number; sAt: number; end: number } {
    const np = roundUp4(n);
    const aAt = align16(this.arena.scratch);
    const bAt = align16(aAt + 4 * m * k);
    // 16 bytes of slack after B: the last panel of an unpacked B may read past its end.
    const cAt = align16(bAt + 4 * k * np + 16);
    const sAt = align16(cAt + 4 * m * np);
    return { aAt, bAt, cAt, sAt, end: sAt + 4 * k * n };
  }

  /**
   * Whether one m × k × n product fits in linear memory, growing it if needed. False when
   * the engine refuses to grow it (wasm32 memory stops at 4 GiB, often less).
   */
  fits(m: number, n: number, k: number): boolean {
    return this.arena.ensure(this.layout(m, n, k).end);
  }

  /**
   * out[outOff + i·n + j] = Σ_p A[i][p]·B[p][j] for an m × k A and a k × n B (k > 0).
   * Call `fits(m, n, k)` first. An `epilogue` runs on the product in linear memory before
   * it is copied out: it gets C's byte address, its row stride in bytes and the first free
   * byte after the product's scratch, and returns whether it rewrote C (the result); the
   * call returns what it returned (false without one). With a `pool` (on this arena) the
   * product is cut into row or column blocks computed by the pool's threads at once; the
   * results are the same bits as on one thread.
   */
  gemm(
    A: MatRef,
    B: MatRef,
    m: number,
    n: number,
    k: number,
    out: Float32Array,
    outOff: number,
    epilogue?: (cAt: number, ldc: number, free: number) => boolean,
    pool?: ThreadPool | null,
  ): boolean {
    const np = roundUp4(n);
    const lay = this.layout(m, n, k);
    const { sAt, end } = lay;
    if (!this.fits(m, n, k)) throw new RangeError(`matmul: ${m}x${k}x${n} does not fit in WebAssembly memory`);
    const [aAt, rsA, csA] = this.placeA(A, m, k, lay.aAt);
    const usePool = pool && pool.arena === this.arena ? pool : null;
    const { direct, packs, bAt } = this.placeB(B, m, k, n, lay.bAt, sAt);
    // An output that lives in the arena (a CPU storage) with whole 4-float rows is written in place.
    const outAt = np === n ? this.arena.addressOf(out) : -1;
    const cAt = outAt >= 0 ? outAt + 4 * outOff : lay.cAt;
    const ldc = 4 * np;
    const threads = usePool ? usePool.size + 1 : 1;
    // A few chunks per thread, claimed as threads come free: a busy machine's slow thread
    // takes fewer.
    const parts =
      threads > 1
        ? planGemm(m, n, this.shape.mr, this.nr, usePool!.chunksPerThread * threads)
        : [{ r0: 0, r1: m, c0: 0, c1: n }];
    const lists = parts.map((p) => this.blockCalls(p.r0, p.r1, p.c0, p.c1, direct, aAt, rsA, csA, bAt, cAt, ldc, n, k));
    if (parts.length === 1 || !usePool) {
      for (const c of packs) this.pack(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
      for (const c of lists[0]) this.rows[c[0]](c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]);
    } else {
      const ids = this.rowsMods.map((r, nv) => usePool.fnId(r.mod, r.bytes, end, this.rows[nv]));
      const jobs = lists.map((l) => l.map((c) => [ids[c[0]], ...c.slice(1)]));
      if (packs.length > 0) {
        const packId = usePool.fnId(this.packMod.mod, this.packMod.bytes, end, this.pack);
        if (parts[0].r1 - parts[0].r0 === m) {
          // A column cut: each chunk packs its own panels first, so packing is split too, the
          // packed panels are in the cache of the thread that reads them, and no second job
          // (with its wake-up) is needed.
          parts.forEach((p, i) =>
            jobs[i].unshift(...packs.filter((c) => c[7] >= p.c0 && c[7] < p.c1).map((c) => [packId, ...c.slice(0, 7)])),
          );
        } else if (k * n >= PACK_SPLIT && packs.length > 1) {
          const split = splitRange(packs.length, usePool.chunksPerThread * threads);
          usePool.run(
            split.map(([s0, e0]) => packs.slice(s0, e0).map((c) => [packId, ...c.slice(0, 7)])),
            end,
          );
        } else {
          for (const c of packs) this.pack(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
        }
      }
      usePool.run(jobs, end);
    }
    const fused = epilogue ? epilogue(cAt, ldc, end) : false;
    if (outAt >= 0) return fused;
    const f = this.arena.f32;
    const c0 = wordAt(cAt);
    if (np === n) out.set(f.subarray(c0, c0 + m * n), outOff);
    else for (let i = 0; i < m; i++) out.set(f.subarray(c0 + i * np, c0 + i * np + n), outOff + i * n);
    return fused;
  }

  /**
   * The kernel calls for rows [r0, r1) × columns [c0, c1) of C, k blocks outermost (so each
   * element accumulates its k blocks in order): [nv, ...the 10 arguments of rows<nv>].
   */
  private blockCalls(
    r0: number,
    r1: number,
    c0: number,
    c1: number,
    direct: boolean,
    aAt: number,
    rsA: number,
    csA: number,
    bAt: number,
    cAt: number,
    ldc: number,
    n: number,
    k: number,
  ): number[][] {
    const { nr, kc: KC } = this;
    const np = roundUp4(n);
    const calls: number[][] = [];
    for (let p0 = 0; p0 < k; p0 += KC) {
      const kc = Math.min(KC, k - p0);
      for (let j0 = c0; j0 < c1; j0 += nr) {
        const wp = Math.min(nr, np - j0);
        // Packed: panels before this one are all nr wide, so panel j0 starts at B + 4·j0·k.
        const ldb = direct ? 4 * n : 4 * wp;
        const panel = direct ? bAt + 4 * j0 + p0 * ldb : bAt + 4 * j0 * k + p0 * ldb;
        calls.push([
          wordAt(wp),
          aAt + p0 * csA + r0 * rsA,
          rsA,
          csA,
          panel,
          ldb,
          cAt + 4 * j0 + r0 * ldc,
          ldc,
          kc,
          p0 === 0 ? 1 : 0,
          r1 - r0,
        ]);
      }
    }
    return calls;
  }

  /**
   * Where the kernel reads A: in place when A lives in the arena (any non-negative strides:
   * the kernel walks rows and columns by byte strides), else copied to byte address `at`.
   * Returns its address and (row, column) byte strides.
   */
  private placeA(A: MatRef, m: number, k: number, at: number): [number, number, number] {
    const { data, off, rs, cs } = A;
    const home = this.arena.addressOf(data);
    if (home >= 0 && rs >= 0 && cs >= 0) return [home + 4 * off, 4 * rs, 4 * cs];
    const f = this.arena.f32;
    const d0 = wordAt(at);
    const rowMajor = cs === 1 && (rs === k || m === 1);
    const colMajor = !rowMajor && rs === 1 && (cs === m || k === 1);
    const placed: [number, number, number] = colMajor ? [at, 4, 4 * m] : [at, 4 * k, 4];
    const key = `${at},${off},${rs},${cs},${m},${k}`;
    if (this.lastAData === data && this.lastA === key) return placed;
    this.lastAData = data;
    this.lastA = key;
    if (rowMajor || colMajor) {
      f.set(data.subarray(off, off + m * k), d0);
    } else if (cs === 1) {
      for (let i = 0; i < m; i++) f.set(data.subarray(off + i * rs, off + i * rs + k), d0 + i * k);
    } else {
      for (let i = 0; i < m; i++) {
        let s = off + i * rs;
        const d = d0 + i * k;
        for (let p = 0; p < k; p++, s += cs) f[d + p] = data[s];
      }
    }
    return placed;
  }

  /**
   * Where the kernel reads B. A contiguous row-major B under a short A is read as-is
   * (`direct`; in place when it lives in the arena, else copied to `at`): the kernel reads its
   * rows 4n bytes apart, and columns past n of the last panel read whatever follows, which
   * only reaches columns of C that are dropped. Any other layout is packed into column panels
   * of nr at `at` (the last one 4·⌈w/4⌉ wide, zero-padded): by the wasm packer — from B in
   * place, or from a copy at `stage`, when B spans at most k·n elements (a transposed weight)
   * — returned as `packs`, one call per panel (the 7 packer arguments, then the panel's first
   * column), for the caller to run where the panel is used; else by a JS loop.
   */
  private placeB(
    B: MatRef,
    m: number,
    k: number,
    n: number,
    at: number,
    stage: number,
  ): { direct: boolean; packs: number[][]; bAt: number } {
    const { data, off, rs, cs } = B;
    // Packing pays for itself on tall A (many row blocks reuse each panel); it also dodges the
    // cache-set conflicts of power-of-two row strides that large square products hit.
    const direct = this.directB && m <= 128 && cs === 1 && (rs === n || k === 1);
    const home = this.arena.addressOf(data);
    if (direct && home >= 0) return { direct, packs: [], bAt: home + 4 * off };
    const key = `${at},${off},${rs},${cs},${m},${k},${n}`;
    if (this.lastBData === data && this.lastB === key) return { direct, packs: [], bAt: at };
    this.lastBData = data;
    this.lastB = key;
    const f = this.arena.f32;
    if (direct) {
      f.set(data.subarray(off, off + k * n), wordAt(at));
      return { direct, packs: [], bAt: at };
    }
    const nr = this.nr;
    const span = (k - 1) * rs + (n - 1) * cs + 1;
    if (rs >= 0 && cs >= 0 && span <= k * n) {
      // The caller runs the packs in this same call, before any kernel reads the panels.
      let src = home + 4 * off;
      if (home < 0) {
        f.set(data.subarray(off, off + span), wordAt(stage));
        src = stage;
      }
      const packs: number[][] = [];
      for (let j0 = 0; j0 < n; j0 += nr) {
        const w = Math.min(nr, n - j0);
        packs.push([src + 4 * j0 * cs, 4 * rs, 4 * cs, at + 4 * j0 * k, k, w, roundUp4(w), j0]);
      }
      return { direct, packs, bAt: at };
    }
    for (let j0 = 0; j0 < n; j0 += nr) {
      const w = Math.min(nr, n - j0);
      const wp = roundUp4(w);
      let d = wordAt(at) + j0 * k;
      let s = off + j0 * cs;
      for (let p = 0; p < k; p++, s += rs) {
        for (let j = 0, t = s; j < w; j++, t += cs) f[d++] = data[t];
        for (let j = w; j < wp; j++) f[d++] = 0;
      }
    }
    return { direct, packs: [], bAt: at };
  }
}
