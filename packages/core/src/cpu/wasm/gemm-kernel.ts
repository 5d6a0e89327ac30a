import { Code } from './code';
import { I32, ModuleBuilder, V128, ValType } from './module';

/**
 * Generates the matmul kernels as a WebAssembly module (SIMD, f32 accumulation).
 *
 * The micro-kernel `micro(mr, nv)` computes an mr × 4·nv block of C held in v128 locals:
 * for each k step it loads one row of a packed B panel (nv vectors), broadcasts one A value
 * per row (`v128.load32_splat`) and does acc += a·b. A is read in place through per-row
 * pointers advanced by a byte stride, so row-major and column-major (transposed) A cost the
 * same and need no packing. B rows are `ldb` bytes apart: either B itself (row-major) or a
 * packed panel whose rows are contiguous (16·nv bytes apart), which streams memory.
 *
 * `rows<nv>(a, rsA, csA, b, c, ldc, kc, first, m)` runs the micro-kernel down all m rows of
 * one B panel: full MR-row blocks, then one smaller kernel for the remainder. With `first`
 * the block starts from zero, otherwise it accumulates onto C (k blocking).
 */
export interface GemmShape {
  /** Rows of C per micro-kernel. */
  mr: number;
  /** v128 vectors (4 columns each) of C per micro-kernel; a B panel is 4·nv columns. */
  nv: number;
  /** k steps per loop iteration. */
  unroll: number;
  /** Fused multiply-add from relaxed SIMD instead of mul + add. */
  fma: boolean;
}

// 4 × 12 of C in 12 v128 locals + 3 for B + 1 splat: the 16 xmm registers of x86-64.
export const DEFAULT_GEMM: GemmShape = { mr: 4, nv: 3, unroll: 1, fma: false };
// With fused multiply-add, 6 × 8 (12 accumulators + 2 for B + 1 splat): one instruction per
// 4 multiply-adds instead of two makes more rows per B load pay.
export const FMA_GEMM: GemmShape = { mr: 6, nv: 2, unroll: 1, fma: true };

const P_A = 0,
  P_RSA = 1,
  P_CSA = 2,
  P_B = 3,
  P_LDB = 4,
  P_C = 5,
  P_LDC = 6,
  P_KC = 7,
  P_FIRST = 8,
  P_M = 9;
const MICRO_PARAMS: ValType[] = [I32, I32, I32, I32, I32, I32, I32, I32, I32];

function micro(mr: number, nv: number, unroll: number, fma: boolean): { locals: ValType[]; body: number[] } {
  const locals: ValType[] = [];
  const local = (t: ValType) => {
    locals.push(t);
    return MICRO_PARAMS.length + locals.length - 1;
  };
  const aPtr = [P_A];
  for (let r = 1; r < mr; r++) aPtr.push(local(I32));
  const cr = local(I32);
  const acc: number[][] = [];
  for (let r = 0; r < mr; r++) acc.push(Array.from({ length: nv }, () => local(V128)));
  const bv = Array.from({ length: nv }, () => local(V128));
  const s = local(V128);
  const c = new Code();

  for (let r = 1; r < mr; r++)
    c.get(aPtr[r - 1])
      .get(P_RSA)
      .i32Add()
      .set(aPtr[r]);
  // Accumulators start at zero on the first k block, else from C.
  c.get(P_FIRST).if_();
  for (let r = 0; r < mr; r++) for (let v = 0; v < nv; v++) c.v128Const0().set(acc[r][v]);
  c.else_();
  c.get(P_C).set(cr);
  for (let r = 0; r < mr; r++) {
    for (let v = 0; v < nv; v++)
      c.get(cr)
        .v128Load(16 * v)
        .set(acc[r][v]);
    if (r + 1 < mr) c.get(cr).get(P_LDC).i32Add().set(cr);
  }
  c.end();

  // One k step: bv = B row; acc[r] += splat(A[r][p]) * bv; advance every pointer.
  const step = () => {
    for (let v = 0; v < nv; v++)
      c.get(P_B)
        .v128Load(16 * v)
        .set(bv[v]);
    c.get(P_B).get(P_LDB).i32Add().set(P_B);
    for (let r = 0; r < mr; r++) {
      c.get(aPtr[r]).v128Load32Splat().set(s);
      for (let v = 0; v < nv; v++) {
        if (fma) c.get(s).get(bv[v]).get(acc[r][v]).f32x4RelaxedMadd().set(acc[r][v]);
        else c.get(acc[r][v]).get(s).get(bv[v]).f32x4Mul().f32x4Add().set(acc[r][v]);
      }
      c.get(aPtr[r]).get(P_CSA).i32Add().set(aPtr[r]);
    }
  };
  // Unrolled main loop over floor(kc / unroll) iterations, then a one-step tail loop.
  if (unroll > 1) {
    const iters = local(I32);
    c.get(P_KC).i32Const(unroll).i32DivU().set(iters);
    c.block().get(iters).i32Eqz().brIf(0).loop();
    for (let u = 0; u < unroll; u++) step();
    c.get(iters).i32Const(1).i32Sub().tee(iters).brIf(0);
    c.end().end();
    c.get(P_KC).i32Const(unroll).i32RemU().set(P_KC);
  }
  c.block().get(P_KC).i32Eqz().brIf(0).loop();
  step();
  c.get(P_KC).i32Const(1).i32Sub().tee(P_KC).brIf(0);
  c.end().end();

  c.get(P_C).set(cr);
  for (let r = 0; r < mr; r++) {
    for (let v = 0; v < nv; v++)
      c.get(cr)
        .get(acc[r][v])
        .v128Store(16 * v);
    if (r + 1 < mr) c.get(cr).get(P_LDC).i32Add().set(cr);
  }
  return { locals, body: c.bytes };
}

function rows(shape: GemmShape, microIdx: number[]): { locals: ValType[]; body: number[] } {
  const { mr } = shape;
  const c = new Code();
  const args = (c2: Code) =>
    c2.get(P_A).get(P_RSA).get(P_CSA).get(P_B).get(P_LDB).get(P_C).get(P_LDC).get(P_KC).get(P_FIRST);
  // Full blocks of mr rows.
  c.block().get(P_M).i32Const(mr).i32LtS().brIf(0).loop();
  args(c).call(microIdx[mr]);
  c.get(P_A).get(P_RSA).i32Const(mr).i32Mul().i32Add().set(P_A);
  c.get(P_C).get(P_LDC).i32Const(mr).i32Mul().i32Add().set(P_C);
  c.get(P_M).i32Const(mr).i32Sub().tee(P_M).i32Const(mr).i32GeS().brIf(0);
  c.end().end();
  // The remaining 0 < m < mr rows.
  for (let r = 1; r < mr; r++) {
    c.get(P_M).i32Const(r).i32Eq().if_();
    args(c).call(microIdx[r]);
    c.end();
  }
  return { locals: [], body: c.bytes };
}

/**
 * The module for panels of 4·nv columns: exports `rows`. One module per panel width keeps
 * each one small: browsers refuse synchronous compilation of modules over 4 KB on the main
 * thread.
 */
export function buildGemmModule(shape: GemmShape, nv: number): Uint8Array<ArrayBuffer> {
  const mb = new ModuleBuilder(1);
  const microIdx: number[] = [-1];
  for (let r = 1; r <= shape.mr; r++) {
    microIdx.push(
      mb.add({
        name: `micro${r}`,
        params: MICRO_PARAMS,
        results: [],
        ...micro(r, nv, shape.unroll, shape.fma),
        exported: false,
      }),
    );
  }
  mb.add({ name: 'rows', params: [...MICRO_PARAMS, I32], results: [], ...rows(shape, microIdx), exported: true });
  return mb.toBytes();
}
