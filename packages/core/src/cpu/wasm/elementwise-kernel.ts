import type { DType } from '../../dtype';
import type { Expr } from '../../expr';
import { Code } from './code';
import { I32, ModuleBuilder, V128, ValType } from './module';

/**
 * Compiles a float32 elementwise expression to a WebAssembly SIMD loop, 4 lanes at a time.
 * Every f32x4 op rounds to f32 exactly as the JS kernel's Math.fround does, so results are
 * bit-identical to it (NaN payloads aside). Only what maps onto single SIMD ops is accepted
 * (add, sub, mul, div, max, neg, sqrt, recip, and where over eq/lt of floats); anything else
 * (exp, log, sin, pow, ints, bools as data) returns null and stays on the JS kernel.
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
  return floatNode(e, inDT);
}

function floatNode(e: Expr, inDT: readonly DType[]): boolean {
  switch (e.kind) {
    case 'input': return inDT[e.index] === 'float32';
    case 'const': return e.dtype === 'float32';
    case 'cast': return e.dtype === 'float32' && floatNode(e.a, inDT);
    case 'unary': return (e.op === 'neg' || e.op === 'sqrt' || e.op === 'recip') && floatNode(e.a, inDT);
    case 'binary': return (e.op === 'add' || e.op === 'sub' || e.op === 'mul' || e.op === 'div' || e.op === 'max') && floatNode(e.a, inDT) && floatNode(e.b, inDT);
    case 'where': return maskNode(e.c, inDT) && floatNode(e.a, inDT) && floatNode(e.b, inDT);
  }
}

function maskNode(e: Expr, inDT: readonly DType[]): boolean {
  return e.kind === 'binary' && (e.op === 'eq' || e.op === 'lt') && floatNode(e.a, inDT) && floatNode(e.b, inDT);
}

/** How an input of the 2-d loop is laid out (see the module comment). */
export type WasmKind = 'u' | 'c' | 'z';

export function buildElementwiseModule(outs: readonly Expr[], kinds: readonly WasmKind[]): Uint8Array<ArrayBuffer> {
  const nIn = kinds.length;
  const ROWS = 0, INNER = 1;
  const inP = (i: number) => 2 + 2 * i;
  const inRS = (i: number) => 3 + 2 * i;
  const outP = (k: number) => 2 + 2 * nIn + 2 * k;
  const outRS = (k: number) => 3 + 2 * nIn + 2 * k;
  const CP = 2 + 2 * nIn + 2 * outs.length;
  const params: ValType[] = new Array(CP + 1).fill(I32);
  const locals: ValType[] = [];
  const local = (t: ValType) => { locals.push(t); return params.length + locals.length - 1; };
  const o = local(I32);
  const c = new Code();
  // Scalar inputs and constants are splatted once, before the loops; column inputs per row.
  const splat: number[] = [];
  kinds.forEach((s, i) => {
    if (s === 'u') return;
    splat[i] = local(V128);
    if (s === 'z') c.get(inP(i)).v128Load32Splat().set(splat[i]);
  });
  const constLocals: number[] = [];
  const countConsts = (e: Expr): number => {
    switch (e.kind) {
      case 'input': return 0;
      case 'const': return 1;
      case 'cast': case 'unary': return countConsts(e.a);
      case 'binary': return countConsts(e.a) + countConsts(e.b);
      case 'where': return countConsts(e.c) + countConsts(e.a) + countConsts(e.b);
    }
  };
  const nConsts = outs.reduce((a, e) => a + countConsts(e), 0);
  for (let j = 0; j < nConsts; j++) {
    constLocals.push(local(V128));
    c.get(CP).v128Load32Splat(4 * j).set(constLocals[j]);
  }
  let nextConst = 0;
  // Pushes the node's v128 value. Constants are numbered in the same pre-order as exprKey.
  const emit = (e: Expr): void => {
    switch (e.kind) {
      case 'input':
        if (kinds[e.index] !== 'u') c.get(splat[e.index]);
        else c.get(inP(e.index)).get(o).i32Add().v128Load();
        return;
      case 'const': c.get(constLocals[nextConst++]); return;
      case 'cast': emit(e.a); return;
      case 'unary':
        if (e.op === 'recip') { c.f32Const(1).f32x4Splat(); emit(e.a); c.f32x4Div(); return; }
        emit(e.a);
        if (e.op === 'neg') c.f32x4Neg(); else c.f32x4Sqrt();
        return;
      case 'binary':
        emit(e.a);
        emit(e.b);
        switch (e.op) {
          case 'add': c.f32x4Add(); return;
          case 'sub': c.f32x4Sub(); return;
          case 'mul': c.f32x4Mul(); return;
          case 'div': c.f32x4Div(); return;
          case 'max': c.f32x4Max(); return;
          case 'eq': c.f32x4Eq(); return;
          case 'lt': c.f32x4Lt(); return;
          default: throw new Error(`wasm elementwise: unsupported op ${e.op}`);
        }
      case 'where': {
        // Constants are numbered c, a, b (exprKey's order) but bitselect wants a, b, mask.
        const first = nextConst;
        const skip = countConsts(e.c);
        nextConst = first + skip;
        emit(e.a);
        emit(e.b);
        const after = nextConst;
        nextConst = first;
        emit(e.c);
        nextConst = after;
        c.v128Bitselect();
        return;
      }
    }
  };
  c.block();
  c.get(ROWS).i32Eqz().brIf(0);
  c.get(INNER).i32Eqz().brIf(0);
  c.loop(); // rows
  kinds.forEach((s, i) => { if (s === 'c') c.get(inP(i)).v128Load32Splat().set(splat[i]); });
  c.i32Const(0).set(o);
  c.loop(); // inner, 16 bytes a step
  outs.forEach((e, k) => { c.get(outP(k)).get(o).i32Add(); emit(e); c.v128Store(); });
  c.get(o).i32Const(16).i32Add().tee(o).get(INNER).i32LtS().brIf(0);
  c.end();
  kinds.forEach((s, i) => { if (s !== 'z') c.get(inP(i)).get(inRS(i)).i32Add().set(inP(i)); });
  outs.forEach((_, k) => c.get(outP(k)).get(outRS(k)).i32Add().set(outP(k)));
  c.get(ROWS).i32Const(1).i32Sub().tee(ROWS).brIf(0);
  c.end().end();
  const mb = new ModuleBuilder(1);
  mb.add({ name: 'run', params, results: [], locals, body: c.bytes, exported: true });
  return mb.toBytes();
}
