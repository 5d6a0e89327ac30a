/**
 * The byte-level encodings of the WebAssembly binary format that the module builder needs:
 * LEB128 integers, IEEE floats, length-prefixed vectors and strings.
 */
export type Bytes = number[];

export function u32(n: number): Bytes {
  const out: Bytes = [];
  let v = n >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer (i32.const immediates). */
export function s32(n: number): Bytes {
  const out: Bytes = [];
  let v = n | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

export function f32(x: number): Bytes {
  return Array.from(new Uint8Array(new Float32Array([x]).buffer));
}

export function str(s: string): Bytes {
  const b = Array.from(new TextEncoder().encode(s));
  return [...u32(b.length), ...b];
}

/** A vector: element count, then the elements' bytes. */
export function vec(items: readonly Bytes[]): Bytes {
  return [...u32(items.length), ...items.flat()];
}
