/**
 * Byte addresses in the CPU backend's linear memory run up to 4 GiB (wasm32 addresses are
 * unsigned). JS reads them back from Int32Array words as negative numbers past 2 GiB, and a
 * signed shift (`>> 2`) of either form gives a negative element index there: always convert
 * through these unsigned helpers.
 */

/** The f32/i32 element index of a 4-aligned byte address (given as a number or as an i32 word). */
export function wordAt(byteAddress: number): number {
  return byteAddress >>> 2;
}

/** A byte address read back from an i32 word, as the unsigned number it is. */
export function unsignedAddress(word: number): number {
  return word >>> 0;
}
