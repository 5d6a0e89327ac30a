import { DType, TypedArray, ValueError } from '@surf/core';

/**
 * The safetensors dtypes Surf reads and writes, and their conversion to Surf's three dtypes.
 * PyTorch checkpoints are full of dtypes Surf does not compute in: half-precision weights
 * (F16, BF16), double ones (F64), and int64 counters (BatchNorm's num_batches_tracked). They
 * load converted: every float to float32 (F64 rounds to nearest, as `.float()` does), every
 * integer to int32 when it fits (a value outside int32 is an error naming the tensor, never a
 * silent wrap), BOOL to bool. Saving writes F32/I32/BOOL, or F16/BF16 for float tensors on request.
 * Every read goes through a DataView: the bytes may sit at any offset of a shared buffer
 * (a Node Buffer from readFileSync is a view into a pool).
 */
export type SafeDType = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U32' | 'U16' | 'U8' | 'BOOL';

/** What a float tensor may be stored as. */
export type StoreDType = 'float32' | 'float16' | 'bfloat16';

export const ITEM_BYTES: Readonly<Record<SafeDType, number>> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
};

export function isSafeDType(d: unknown): d is SafeDType {
  return typeof d === 'string' && Object.prototype.hasOwnProperty.call(ITEM_BYTES, d);
}

/** The Surf dtype a stored dtype loads as. */
export function surfDType(d: SafeDType): DType {
  if (d === 'BOOL') return 'bool';
  return d[0] === 'F' || d === 'BF16' ? 'float32' : 'int32';
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half bits to a number (exact). */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/** bfloat16 bits to a number (exact: the top half of a float32). */
export function bfloat16ToNumber(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0];
}

/** Rounds half to even (x >= 0). */
function roundEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** A float32 value to IEEE half bits, rounded to nearest even; overflow gives ±Infinity, as PyTorch's .half(). */
export function numberToHalf(v: number): number {
  f32[0] = v;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  if (exp === 0xff) return sign | 0x7c00 | (bits & 0x7fffff ? 0x200 : 0);
  const a = Math.abs(f32[0]);
  const e = exp - 127;
  // Below 2^-14 a half is subnormal: a multiple of 2^-24 (the division is exact in a double).
  if (e < -14) return sign | roundEven(a / 2 ** -24);
  // A normal half holds 11 significant bits; a carry out of them moves into the exponent by itself.
  const r = roundEven(a / 2 ** (e - 10));
  const h = ((e + 15) << 10) + r - 1024;
  return sign | Math.min(h, 0x7c00);
}

/** A float32 value to bfloat16 bits, rounded to nearest even (NaN stays a quiet NaN). */
export function numberToBfloat16(v: number): number {
  f32[0] = v;
  const bits = u32[0];
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x7fffff) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/**
 * Converts `count` little-endian elements of dtype `d` at `raw` into a fresh typed array of
 * Surf's dtype. Integers outside int32 are a ValueError naming the tensor.
 */
export function decodeElements(name: string, d: SafeDType, raw: Uint8Array): TypedArray {
  const count = raw.byteLength / ITEM_BYTES[d];
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const outOfRange = (i: number, v: number | bigint): never => {
    throw new ValueError(
      `load: tensor '${name}' (${d}) holds ${v} at element ${i}, outside int32 [-2147483648, 2147483647]; Surf computes integers in int32 (store it as a float, or rescale it, before saving)`,
    );
  };
  switch (d) {
    case 'BOOL': {
      const out = new Uint8Array(count);
      for (let i = 0; i < count; i++) out[i] = raw[i] ? 1 : 0;
      return out;
    }
    case 'F32': {
      // A byte copy lands at offset 0 of a new buffer, so it is aligned whatever raw's offset was.
      const copy = new Uint8Array(raw.byteLength);
      copy.set(raw);
      if (littleEndian) return new Float32Array(copy.buffer);
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getFloat32(i * 4, true);
      return out;
    }
    case 'F64': {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getFloat64(i * 8, true);
      return out;
    }
    case 'F16': {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = halfToNumber(dv.getUint16(i * 2, true));
      return out;
    }
    case 'BF16': {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = bfloat16ToNumber(dv.getUint16(i * 2, true));
      return out;
    }
    case 'I64': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) {
        const v = dv.getBigInt64(i * 8, true);
        if (v < -2147483648n || v > 2147483647n) outOfRange(i, v);
        out[i] = Number(v);
      }
      return out;
    }
    case 'U32': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) {
        const v = dv.getUint32(i * 4, true);
        if (v > 2147483647) outOfRange(i, v);
        out[i] = v;
      }
      return out;
    }
    case 'I32': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getInt32(i * 4, true);
      return out;
    }
    case 'I16': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getInt16(i * 2, true);
      return out;
    }
    case 'U16': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getUint16(i * 2, true);
      return out;
    }
    case 'I8': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = dv.getInt8(i);
      return out;
    }
    case 'U8': {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = raw[i];
      return out;
    }
  }
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The stored dtype of a tensor of Surf dtype `d` saved as `store`. */
export function storedDType(d: DType, store: StoreDType): SafeDType {
  if (d === 'bool') return 'BOOL';
  if (d === 'int32') return 'I32';
  return store === 'float16' ? 'F16' : store === 'bfloat16' ? 'BF16' : 'F32';
}

/** The little-endian bytes of `data` stored as `d` (one of what storedDType returns). */
export function encodeElements(d: SafeDType, data: TypedArray): Uint8Array {
  const out = new Uint8Array(data.length * ITEM_BYTES[d]);
  const dv = new DataView(out.buffer);
  const n = data.length;
  if (d === 'BOOL') for (let i = 0; i < n; i++) out[i] = data[i] ? 1 : 0;
  else if (d === 'F32') for (let i = 0; i < n; i++) dv.setFloat32(i * 4, data[i], true);
  else if (d === 'I32') for (let i = 0; i < n; i++) dv.setInt32(i * 4, data[i], true);
  else if (d === 'F16') for (let i = 0; i < n; i++) dv.setUint16(i * 2, numberToHalf(data[i]), true);
  else if (d === 'BF16') for (let i = 0; i < n; i++) dv.setUint16(i * 2, numberToBfloat16(data[i]), true);
  else throw new ValueError(`save: cannot write dtype ${d}`);
  return out;
}
