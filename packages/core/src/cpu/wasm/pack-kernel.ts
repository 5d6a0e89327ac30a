import { Code } from './code';
import { I32, ModuleBuilder } from './module';

/**
 * Generates `pack(src, rs, cs, dst, rows, w, wp)`: copies a rows × w f32 block whose element
 * (p, j) is at src + p·rs + j·cs (byte strides) to dst as rows of wp floats, zero-filling
 * columns w..wp. This is how a transposed B (a PyTorch-layout weight read as Wᵀ) becomes
 * contiguous column panels inside wasm memory, several times faster than the same loop in JS.
 */
export function buildPackModule(): Uint8Array<ArrayBuffer> {
  const SRC = 0,
    RS = 1,
    CS = 2,
    DST = 3,
    ROWS = 4,
    W = 5,
    WP = 6,
    S = 7,
    J = 8;
  const c = new Code();
  c.block().get(ROWS).i32Eqz().brIf(0).loop();
  c.get(SRC).set(S);
  // Copy w values of this row.
  c.get(W).set(J);
  c.block().get(J).i32Eqz().brIf(0).loop();
  c.get(DST).get(S).f32Load().f32Store();
  c.addTo(DST, 4);
  c.get(S).get(CS).i32Add().set(S);
  c.get(J).i32Const(1).i32Sub().tee(J).brIf(0);
  c.end().end();
  // Zero the padding columns.
  c.get(WP).get(W).i32Sub().set(J);
  c.block().get(J).i32Eqz().brIf(0).loop();
  c.get(DST).f32Const(0).f32Store();
  c.addTo(DST, 4);
  c.get(J).i32Const(1).i32Sub().tee(J).brIf(0);
  c.end().end();
  c.get(SRC).get(RS).i32Add().set(SRC);
  c.get(ROWS).i32Const(1).i32Sub().tee(ROWS).brIf(0);
  c.end().end();
  const mb = new ModuleBuilder(1);
  mb.add({
    name: 'pack',
    params: [I32, I32, I32, I32, I32, I32, I32],
    results: [],
    locals: [I32, I32],
    body: c.bytes,
    exported: true,
  });
  return mb.toBytes();
}
