import { ValueError } from '@surf/core';
import { decodeSafetensors, encodeSafetensors, RawTensor } from '../src/safetensors/format';

// Fixtures are built byte by byte from the format spec, independently of the encoder:
// u64 LE header length, JSON header, data packed little-endian after it.
function file(headerJson: string, data: number[], opts: { pad?: boolean; lenOverride?: number } = {}): Uint8Array {
  let h = headerJson;
  if (opts.pad !== false) while (h.length % 8 !== 0) h += ' ';
  const hb = Buffer.from(h, 'utf8');
  const out = new Uint8Array(8 + hb.length + data.length);
  const len = opts.lenOverride ?? hb.length;
  for (let i = 0; i < 8; i++) out[i] = Math.floor(len / 2 ** (8 * i)) & 0xff;
  out.set(hb, 8);
  out.set(data, 8 + hb.length);
  return out;
}

const f32le = (xs: number[]) => [...Buffer.from(new Float32Array(xs).buffer)];
const i32le = (xs: number[]) => {
  const b = Buffer.alloc(xs.length * 4);
  xs.forEach((x, i) => b.writeInt32LE(x, i * 4));
  return [...b];
};

test('encodes byte-identically to the reference writer for a single F32 tensor', () => {
  // The reference implementation's own serialize test: {"test": zeros(2,2) F32} is a 57-byte
  // header padded with 7 spaces to 64, then 16 zero bytes.
  const bytes = encodeSafetensors([['test', { dtype: 'float32', shape: [2, 2], data: new Float32Array(4) }]]);
  const expected = file('{"test":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}', new Array(16).fill(0));
  expect(expected.length).toBe(8 + 64 + 16);
  expect(Array.from(bytes)).toEqual(Array.from(expected));
});

test('decodes a hand-built file with F32, I32, BOOL and metadata', () => {
  const header =
    '{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"idx":{"dtype":"I32","shape":[3],"data_offsets":[16,28]},"m":{"dtype":"BOOL","shape":[2],"data_offsets":[28,30]},"s":{"dtype":"F32","shape":[],"data_offsets":[30,34]}}';
  const data = [...f32le([1.5, -2, 3.25, 0]), ...i32le([7, -1, 2147483647]), 1, 0, ...f32le([42])];
  const out = decodeSafetensors(file(header, data));
  expect(out.metadata).toEqual({ format: 'pt' });
  expect([...out.tensors.keys()]).toEqual(['w', 'idx', 'm', 's']);
  const w = out.tensors.get('w')!;
  expect(w.dtype).toBe('float32');
  expect(w.shape).toEqual([2, 2]);
  expect(Array.from(w.data)).toEqual([1.5, -2, 3.25, 0]);
  expect(out.tensors.get('idx')!.dtype).toBe('int32');
  expect(Array.from(out.tensors.get('idx')!.data)).toEqual([7, -1, 2147483647]);
  expect(out.tensors.get('m')!.dtype).toBe('bool');
  expect(Array.from(out.tensors.get('m')!.data)).toEqual([1, 0]);
  expect(out.tensors.get('s')!.shape).toEqual([]);
  expect(Array.from(out.tensors.get('s')!.data)).toEqual([42]);
});

test('accepts an unpadded header and tensors listed out of offset order (as other writers produce)', () => {
  const header =
    '{"b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}';
  const out = decodeSafetensors(file(header, [...f32le([0.5]), ...i32le([9])], { pad: false }));
  expect(Array.from(out.tensors.get('a')!.data)).toEqual([0.5]);
  expect(Array.from(out.tensors.get('b')!.data)).toEqual([9]);
});

test('round-trips through encode and decode, with the data 8-aligned', () => {
  const t: [string, RawTensor][] = [
    ['layer.0.weight', { dtype: 'float32', shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, -6e-8]) }],
    ['labels', { dtype: 'int32', shape: [2], data: new Int32Array([-5, 5]) }],
    ['mask', { dtype: 'bool', shape: [3], data: new Uint8Array([0, 1, 1]) }],
    ['empty', { dtype: 'float32', shape: [0, 4], data: new Float32Array(0) }],
    ['é', { dtype: 'float32', shape: [1], data: new Float32Array([3]) }],
  ];
  const bytes = encodeSafetensors(t, { note: 'hi' });
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  expect(n % 8).toBe(0);
  const back = decodeSafetensors(bytes);
  expect(back.metadata).toEqual({ note: 'hi' });
  for (const [name, raw] of t) {
    const got = back.tensors.get(name)!;
    expect(got.dtype).toBe(raw.dtype);
    expect(got.shape).toEqual(raw.shape);
    expect(Array.from(got.data)).toEqual(Array.from(raw.data));
  }
});

describe('rejects corrupt files with a clear error', () => {
  const okHeader = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
  const okData = f32le([1, 2]);
  const cases: [string, Uint8Array, RegExp][] = [
    ['too short', new Uint8Array(5), /too short/],
    ['header length past the end', file(okHeader, okData, { lenOverride: 4000 }), /runs past the end/],
    ['huge header length', file(okHeader, okData, { lenOverride: 2 ** 40 }), /exceeds/],
    ['header not JSON', file('{"a":', [], {}), /not UTF-8 JSON/],
    ['header an array', file('[1,2]', []), /not a JSON object/],
    [
      'unknown dtype',
      file('{"a":{"dtype":"C64","shape":[2],"data_offsets":[0,4]}}', [0, 0, 0, 0]),
      /dtype "C64".*cannot read; expected one of F64, F32, F16, BF16, I64/,
    ],
    [
      'offsets beyond the buffer',
      file('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', f32le([1])),
      /beyond the 4-byte data area/,
    ],
    [
      'shape/offset size mismatch',
      file('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', okData),
      /needs 12 bytes but data_offsets \[0, 8\] span 8/,
    ],
    [
      'overlapping tensors',
      file(
        '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
        okData,
      ),
      /overlaps/,
    ],
    [
      'a gap in the data',
      file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', okData),
      /gap in the data area/,
    ],
    ['trailing bytes nobody owns', file(okHeader, [...okData, 0, 0, 0, 0]), /holds 12 bytes but the tensors cover 8/],
    ['bad shape', file('{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}}', okData), /shape \[-1\]/],
    ['bad offsets', file('{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}', okData), /end before begin/],
    ['metadata not strings', file('{"__metadata__":{"x":1}}', []), /__metadata__ must map strings to strings/],
  ];
  test.each(cases)('%s', (_name, bytes, msg) => {
    expect(() => decodeSafetensors(bytes)).toThrow(ValueError);
    expect(() => decodeSafetensors(bytes)).toThrow(msg);
  });

  test('writer refuses a reserved name and non-string metadata', () => {
    const t: RawTensor = { dtype: 'float32', shape: [1], data: new Float32Array(1) };
    expect(() => encodeSafetensors([['__metadata__', t]])).toThrow(/reserved/);
    expect(() => encodeSafetensors([['a', t]], { n: 3 as unknown as string })).toThrow(/expected a string/);
  });
});
