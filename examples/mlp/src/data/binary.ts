import { Digits, MnistSplit, PIXELS } from './digits';

/**
 * The split as one binary file, which the browser page fetches instead of 21 MB of JSON:
 * magic "SMN1", u32 train count, u32 test count (little-endian), then train pixels, train
 * labels, test pixels, test labels, one byte each.
 */
const MAGIC = 0x314e4d53; // "SMN1" read as a little-endian u32
const HEADER = 12;

export function encodeSplit(s: MnistSplit): Uint8Array {
  const size = HEADER + s.train.count * (PIXELS + 1) + s.test.count * (PIXELS + 1);
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, MAGIC, true);
  dv.setUint32(4, s.train.count, true);
  dv.setUint32(8, s.test.count, true);
  let at = HEADER;
  for (const d of [s.train, s.test]) {
    out.set(d.pixels, at);
    at += d.pixels.length;
    out.set(d.labels, at);
    at += d.labels.length;
  }
  return out;
}

export function decodeSplit(bytes: Uint8Array): MnistSplit {
  if (bytes.length < HEADER)
    throw new Error(`decodeSplit: ${bytes.length} bytes is shorter than the ${HEADER}-byte header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0, true) !== MAGIC) throw new Error('decodeSplit: not an SMN1 digits file (bad magic)');
  const counts = [dv.getUint32(4, true), dv.getUint32(8, true)];
  const expected = HEADER + (counts[0] + counts[1]) * (PIXELS + 1);
  if (bytes.length !== expected)
    throw new Error(`decodeSplit: ${bytes.length} bytes, expected ${expected} for ${counts[0]} + ${counts[1]} digits`);
  let at = HEADER;
  const sets: Digits[] = counts.map((count) => {
    const pixels = bytes.subarray(at, at + count * PIXELS);
    at += count * PIXELS;
    const labels = bytes.subarray(at, at + count);
    at += count;
    return { count, pixels, labels };
  });
  return { train: sets[0], test: sets[1] };
}
