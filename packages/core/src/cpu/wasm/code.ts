import { Bytes, f32, s32, u32 } from './encoding';

/**
 * An instruction-stream builder: one method per opcode the generated kernels use, each
 * appending its encoding. Memory immediates take the alignment as log2 bytes and a constant
 * byte offset, which is how kernels address a register block's lanes without index math.
 */
export class Code {
  readonly bytes: Bytes = [];

  private op(...b: number[]): this {
    this.bytes.push(...b);
    return this;
  }
  /** SIMD ops: the 0xfd prefix, then the opcode as u32 LEB128. */
  private simd(code: number, ...imm: number[]): this {
    return this.op(0xfd, ...u32(code), ...imm);
  }
  private mem(align: number, offset: number): number[] {
    return [...u32(align), ...u32(offset)];
  }

  // Control. Block types: 0x40 (no result).
  block(): this {
    return this.op(0x02, 0x40);
  }
  loop(): this {
    return this.op(0x03, 0x40);
  }
  if_(): this {
    return this.op(0x04, 0x40);
  }
  else_(): this {
    return this.op(0x05);
  }
  end(): this {
    return this.op(0x0b);
  }
  br(depth: number): this {
    return this.op(0x0c, ...u32(depth));
  }
  brIf(depth: number): this {
    return this.op(0x0d, ...u32(depth));
  }
  return_(): this {
    return this.op(0x0f);
  }
  call(fn: number): this {
    return this.op(0x10, ...u32(fn));
  }
  drop(): this {
    return this.op(0x1a);
  }

  // Locals.
  get(i: number): this {
    return this.op(0x20, ...u32(i));
  }
  set(i: number): this {
    return this.op(0x21, ...u32(i));
  }
  tee(i: number): this {
    return this.op(0x22, ...u32(i));
  }

  // Scalar memory.
  f32Load(offset = 0, align = 2): this {
    return this.op(0x2a, ...this.mem(align, offset));
  }
  f32Store(offset = 0, align = 2): this {
    return this.op(0x38, ...this.mem(align, offset));
  }

  // Scalar arithmetic.
  i32Const(v: number): this {
    return this.op(0x41, ...s32(v));
  }
  f32Const(v: number): this {
    return this.op(0x43, ...f32(v));
  }
  i32Eqz(): this {
    return this.op(0x45);
  }
  i32Eq(): this {
    return this.op(0x46);
  }
  i32Ne(): this {
    return this.op(0x47);
  }
  i32LtS(): this {
    return this.op(0x48);
  }
  i32GtS(): this {
    return this.op(0x4a);
  }
  i32LeS(): this {
    return this.op(0x4c);
  }
  i32GeS(): this {
    return this.op(0x4e);
  }
  i32Add(): this {
    return this.op(0x6a);
  }
  i32Sub(): this {
    return this.op(0x6b);
  }
  i32Mul(): this {
    return this.op(0x6c);
  }
  i32DivU(): this {
    return this.op(0x6e);
  }
  i32RemU(): this {
    return this.op(0x70);
  }
  i32Shl(): this {
    return this.op(0x74);
  }
  f32Add(): this {
    return this.op(0x92);
  }
  f32Mul(): this {
    return this.op(0x94);
  }
  f32Max(): this {
    return this.op(0x97);
  }

  // SIMD.
  v128Load(offset = 0, align = 0): this {
    return this.simd(0x00, ...this.mem(align, offset));
  }
  v128Load32Splat(offset = 0, align = 0): this {
    return this.simd(0x09, ...this.mem(align, offset));
  }
  v128Store(offset = 0, align = 0): this {
    return this.simd(0x0b, ...this.mem(align, offset));
  }
  v128Const0(): this {
    return this.simd(0x0c, ...new Array(16).fill(0));
  }
  f32x4Splat(): this {
    return this.simd(0x13);
  }
  f32x4ExtractLane(lane: number): this {
    return this.simd(0x1f, lane);
  }
  f32x4Eq(): this {
    return this.simd(0x41);
  }
  f32x4Lt(): this {
    return this.simd(0x43);
  }
  v128Bitselect(): this {
    return this.simd(0x52);
  }
  // rounding, abs and min for the op table's simd rows
  f32x4Ceil(): this {
    return this.simd(0x67);
  }
  f32x4Floor(): this {
    return this.simd(0x68);
  }
  f32x4Trunc(): this {
    return this.simd(0x69);
  }
  f32x4Nearest(): this {
    return this.simd(0x6a);
  }
  f32x4Abs(): this {
    return this.simd(0xe0);
  }
  f32x4Min(): this {
    return this.simd(0xe8);
  }
  f32x4Neg(): this {
    return this.simd(0xe1);
  }
  f32x4Sqrt(): this {
    return this.simd(0xe3);
  }
  f32x4Add(): this {
    return this.simd(0xe4);
  }
  f32x4Sub(): this {
    return this.simd(0xe5);
  }
  f32x4Div(): this {
    return this.simd(0xe7);
  }
  f32x4Mul(): this {
    return this.simd(0xe6);
  }
  f32x4Max(): this {
    return this.simd(0xe9);
  }
  // Lane-wise integer and bit ops the vectorised transcendentals (simd-math.ts) use.
  /** A v128 constant of four equal f32 lanes. */
  f32x4Const(x: number): this {
    const b = f32(x);
    return this.simd(0x0c, ...b, ...b, ...b, ...b);
  }
  /** A v128 constant of four equal i32 lanes (a bit pattern). */
  i32x4Const(v: number): this {
    const b = Array.from(new Uint8Array(new Int32Array([v]).buffer));
    return this.simd(0x0c, ...b, ...b, ...b, ...b);
  }
  /** b < a ? b : a, one x86 minps (NaN in a passes through); f32x4.min's NaN rule costs more. */
  f32x4Pmin(): this {
    return this.simd(0xea);
  }
  /** a < b ? b : a, one maxps. */
  f32x4Pmax(): this {
    return this.simd(0xeb);
  }
  f32x4Gt(): this {
    return this.simd(0x44);
  }
  f32x4Le(): this {
    return this.simd(0x45);
  }
  f32x4Ne(): this {
    return this.simd(0x42);
  }
  v128And(): this {
    return this.simd(0x4e);
  }
  v128Or(): this {
    return this.simd(0x50);
  }
  v128Xor(): this {
    return this.simd(0x51);
  }
  i32x4Shl(): this {
    return this.simd(0xab);
  }
  i32x4ShrS(): this {
    return this.simd(0xac);
  }
  i32x4ShrU(): this {
    return this.simd(0xad);
  }
  i32x4Add(): this {
    return this.simd(0xae);
  }
  i32x4Sub(): this {
    return this.simd(0xb1);
  }
  i32x4Lt(): this {
    return this.simd(0x39);
  }
  /** f32 lanes to i32 lanes, truncating toward zero, saturating, NaN to 0. */
  i32x4TruncSatF32x4S(): this {
    return this.simd(0xf8);
  }
  f32x4ConvertI32x4S(): this {
    return this.simd(0xfa);
  }
  /** Relaxed SIMD fused multiply-add: a*b + c (may or may not round once). */
  f32x4RelaxedMadd(): this {
    return this.simd(0x105);
  }

  /** `local[i] += delta` for an i32 local. */
  addTo(i: number, delta: number): this {
    return this.get(i).i32Const(delta).i32Add().set(i);
  }
}
