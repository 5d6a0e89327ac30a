import type { DType } from '../../dtype';
import type { Expr } from '../../expr';
import type { SimdOp } from '../../ops/table';
import { foldExpr } from '../../ops/visit';
import { Code } from './code';
import { I32, ModuleBuilder, V128, ValType } from './module';
import { SIMD_MATH, isSimdMathOp } from './simd-math';

/**
 * Compiles a float32 elementwise expression to a WebAssembly SIMD loop, 4 lanes at a time.
 * Every f32x4 op rounds to f32 exactly as the JS kernel's Math.fround does, so results are
 * bit-identical to it (NaN payloads aside). Accepted: what maps onto single SIMD ops (the op
 * table's rows flagged `simd`, and where over eq/lt of floats), and exp, log, tanh and erf as
 * vectorised polynomials (simd-math.ts: within 2-4 ulp, not bit-identical to the JS kernel);
 * anything else (sin, pow, ints, bools as data) returns null and stays on the JS kernel.
 *
 * The loop is 2-d, rows × inner: `run(rows, innerBytes, in0, rs0, …, out0, rs0', …, consts)`,
 * innerBytes being the row length in bytes rounded up to 16; pointers and row strides are
 * byte addresses and byte counts. An input is 'u' (a row of floats at ptr, ptr advancing by
 * its row stride per row: 0 for a row vector broadcast down the rows, such as a bias), 'c'
 * (one float per row, broadcast along it: ptr advances by its row stride) or 'z' (one float,
 * broadcast everywhere). Outputs are 'u'. Constants are floats at `consts`, splatted once.
 * Flat work is one row.
 */
export function supportedByWasm(e: Expr, inDT: readonly DType[]): boolean {
  // Every node float32 (bools only as the mask of a where), every op in SIMD_OPS.
  if (!inDT.every((d) => d === 'float32')) return false;
  const r = foldExpr<boolean>(e, inDT, {
    input: () => true,
    const: (_, dtype) => dtype === 'float32',
    cast: (a, from, to) => a && from === to,
    unary: (op, a) => a && (Object.hasOwn(SIMD_OPS, op) || isSimdMathOp(op)),
    binary: (op, a, b, dt) => a && b && dt === 'float32' && Object.hasOwn(SIMD_OPS, op),
    where: (c, a, b) => c && a && b,
  });
  return r.value && r.dtype === 'float32';
}

/**
 * How wasm SIMD spells each op flagged `simd` in the op table (f32x4, operands on the
 * stack). eq and lt give all-ones lanes, which `where` uses as a bitselect mask.
 */
type Push = () => void;
const un = (op: (c: Code) => Code) => (c: Code, a: Push) => {
  a();
  op(c);
};
const bin = (op: (c: Code) => Code) => (c: Code, a: Push, b: Push) => {
  a();
  b();
  op(c);
};
const SIMD_OPS: Record<SimdOp, (c: Code, a: Push, b: Push) => void> = {
  neg: un((c) => c.f32x4Neg()),
  sqrt: un((c) => c.f32x4Sqrt()),
  recip: (c, a) => {
    c.f32Const(1).f32x4Splat();
    a();
    c.f32x4Div();
  },
  floor: un((c) => c.f32x4Floor()),
  ceil: un((c) => c.f32x4Ceil()),
  round: un((c) => c.f32x4Nearest()), // half to even, as the table's round
  trunc: un((c) => c.f32x4Trunc()),
  abs: un((c) => c.f32x4Abs()),
  add: bin((c) => c.f32x4Add()),
  sub: bin((c) => c.f32x4Sub()),
  mul: bin((c) => c.f32x4Mul()),
  div: bin((c) => c.f32x4Div()),
  max: bin((c) => c.f32x4Max()),
  min: bin((c) => c.f32x4Min()),
  eq: bin((c) => c.f32x4Eq()),
  lt: bin((c) => c.f32x4Lt()),
};

/** How an input of the 2-d loop is laid out (see the module comment). */
export type WasmKind = 'u' | 'c' | 'z';

export function buildElementwiseModule(outs: readonly Expr[], kinds: readonly WasmKind[]): Uint8Array<ArrayBuffer> {
  const nIn = kinds.length;
  const ROWS = 0,
    INNER = 1;
  const inP = (i: number) => 2 + 2 * i;
  const inRS = (i: number) => 3 + 2 * i;
  const outP = (k: number) => 2 + 2 * nIn + 2 * k;
  const outRS = (k: number) => 3 + 2 * nIn + 2 * k;
  const CP = 2 + 2 * nIn + 2 * outs.length;
  const params: ValType[] = new Array(CP + 1).fill(I32);
  const locals: ValType[] = [];
  const local = (t: ValType) => {
    locals.push(t);
    return params.length + locals.length - 1;
  };
  const o = local(I32);
  const c = new Code();
  // Scalar inputs and constants are splatted once, before the loops; column inputs per row.
  const splat: number[] = [];
  kinds.forEach((s, i) => {
    if (s === 'u') return;
    splat[i] = local(V128);
    if (s === 'z') c.get(inP(i)).v128Load32Splat().set(splat[i]);
  });
  // The body of one 16-byte step, as a fold: each node becomes a thunk that pushes its v128,
  // so `where` can push its branches before its mask (bitselect's order) while constants keep
  // their pre-order numbers (exprKey's, which is the order of their values at `consts`).
  // Each node also gets a structural key (constants by slot): a transcendental met again with
  // the same key (sigmoid's e^-|x| in its numerator and denominator) is computed once per step
  // into a local, and read from it after; the body has no branches, so the first emission
  // always runs before the others.
  const counter = { next: 0 };
  const computed = new Map<string, number>();
  const bodies = outs.map(
    (e) =>
      foldExpr<{ p: Push; k: string }>(
        e,
        kinds.map(() => 'float32'),
        {
          input: (i) => ({
            k: `i${i}`,
            p: () => {
              if (kinds[i] !== 'u') c.get(splat[i]);
              else c.get(inP(i)).get(o).i32Add().v128Load();
            },
          }),
          const: (_, __, slot) => ({ k: `c${slot}`, p: () => c.get(constLocals[slot]) }),
          cast: (a) => a,
          unary: (op, a) => {
            const k = `${op}(${a.k})`;
            if (!isSimdMathOp(op)) return { k, p: () => SIMD_OPS[op as SimdOp](c, a.p, a.p) };
            return {
              k,
              p: () => {
                const at = computed.get(k);
                if (at !== undefined) {
                  c.get(at);
                  return;
                }
                SIMD_MATH[op](c, () => local(V128), a.p);
                const slot = local(V128);
                c.tee(slot);
                computed.set(k, slot);
              },
            };
          },
          binary: (op, a, b) => ({ k: `${op}(${a.k},${b.k})`, p: () => SIMD_OPS[op as SimdOp](c, a.p, b.p) }),
          where: (m, a, b) => ({
            k: `where(${m.k},${a.k},${b.k})`,
            p: () => {
              a.p();
              b.p();
              m.p();
              c.v128Bitselect();
            },
          }),
        },
        counter,
      ).value.p,
  );
  const constLocals: number[] = [];
  for (let j = 0; j < counter.next; j++) {
    constLocals.push(local(V128));
    c.get(CP)
      .v128Load32Splat(4 * j)
      .set(constLocals[j]);
  }
  c.block();
  c.get(ROWS).i32Eqz().brIf(0);
  c.get(INNER).i32Eqz().brIf(0);
  c.loop(); // rows
  kinds.forEach((s, i) => {
    if (s === 'c') c.get(inP(i)).v128Load32Splat().set(splat[i]);
  });
  c.i32Const(0).set(o);
  c.loop(); // inner, 16 bytes a step
  bodies.forEach((push, k) => {
    c.get(outP(k)).get(o).i32Add();
    push();
    c.v128Store();
  });
  c.get(o).i32Const(16).i32Add().tee(o).get(INNER).i32LtS().brIf(0);
  c.end();
  kinds.forEach((s, i) => {
    if (s !== 'z') c.get(inP(i)).get(inRS(i)).i32Add().set(inP(i));
  });
  outs.forEach((_, k) => c.get(outP(k)).get(outRS(k)).i32Add().set(outP(k)));
  c.get(ROWS).i32Const(1).i32Sub().tee(ROWS).brIf(0);
  c.end().end();
  const mb = new ModuleBuilder(1);
  mb.add({ name: 'run', params, results: [], locals, body: c.bytes, exported: true });
  return mb.toBytes();
}
