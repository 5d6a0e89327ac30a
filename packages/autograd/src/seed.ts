import { SurfTypeError, ValueError, countersFor } from '@surf/core';

/**
 * The global random stream, as torch.manual_seed's default generator: one Philox4x32-10 key
 * (64 bits, from the seed) and one 64-bit counter offset. Every draw takes the counters from
 * the offset on and moves the offset past them, so successive calls
 * differ, the same seed replays the same values, and the backends (which run Philox
 * themselves) agree. Each counter gives four values (core's rng/draw.ts), so a draw of n values
 * moves the offset by ceil(n / 4). The offset is a JS number: exact up to 2^53 counters.
 */
let key0 = 0;
let key1 = 0;
let offset = 0;

/** What getRngState returns and setRngState takes: plain numbers, JSON-safe. */
export interface RngState {
  /** Philox's key as two u32 words (low, high). */
  readonly key: readonly [number, number];
  /** Counters drawn so far (the next draw's element 0). */
  readonly offset: number;
}

const U64 = 2n ** 64n;

/** The 64-bit key of a seed: the integer itself (two's complement when negative), else a hash of its text. */
function keyOf(seed: number | string): bigint {
  if (typeof seed === 'number' && Number.isSafeInteger(seed)) return ((BigInt(seed) % U64) + U64) % U64;
  // FNV-1a 64 over the UTF-16 code units of the seed's text.
  let h = 0xcbf29ce484222325n;
  for (const ch of String(seed)) {
    for (let c = ch.codePointAt(0)!; c > 0; c = Math.floor(c / 256))
      h = ((h ^ BigInt(c & 0xff)) * 0x100000001b3n) % U64;
  }
  return h;
}

/** Seeds the global stream (torch.manual_seed): a finite number or a string. */
export function manualSeed(n: number | string): void {
  if (typeof n !== 'string' && typeof n !== 'number')
    throw new SurfTypeError(`manualSeed: seed is ${typeof n}; pass a number or a string`);
  if (typeof n === 'number' && !Number.isFinite(n))
    throw new ValueError(`manualSeed: seed ${n} is not a finite number or a string`);
  const k = keyOf(n);
  key0 = Number(k & 0xffffffffn);
  key1 = Number(k >> 32n);
  offset = 0;
}

/** The stream's position, to save with a checkpoint and give back to setRngState. */
export function getRngState(): RngState {
  return { key: [key0, key1], offset };
}

const isU32 = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 32;

/** Puts the stream back where getRngState found it: the next draws repeat exactly. */
export function setRngState(state: RngState): void {
  const s = state as unknown as { key?: unknown; offset?: unknown } | null;
  if (s === null || typeof s !== 'object')
    throw new SurfTypeError(`setRngState: got ${s === null ? 'null' : typeof s}; pass what getRngState() returned`);
  const extra = Object.keys(s).filter((k) => k !== 'key' && k !== 'offset');
  if (extra.length)
    throw new ValueError(`setRngState: unknown key ${JSON.stringify(extra[0])}; expected { key, offset }`);
  if (!Array.isArray(s.key) || s.key.length !== 2 || !s.key.every(isU32))
    throw new ValueError(
      `setRngState: key ${JSON.stringify(s.key)}; expected two u32 integers, as getRngState() gives`,
    );
  if (typeof s.offset !== 'number' || !Number.isSafeInteger(s.offset) || s.offset < 0)
    throw new ValueError(`setRngState: offset ${JSON.stringify(s.offset)}; expected a non-negative safe integer`);
  key0 = s.key[0] as number;
  key1 = s.key[1] as number;
  offset = s.offset;
}

/**
 * Reserves the counters of an n-element draw (four elements per counter) and returns the draw's Philox state [key low, key high, offset low,
 * offset high] as int32 bits: the array the backends' random kernel reads.
 */
export function takeRandomState(n: number): Int32Array {
  const at = offset;
  offset += countersFor(n);
  return Int32Array.from([key0 | 0, key1 | 0, (at % 2 ** 32) | 0, Math.floor(at / 2 ** 32) | 0]);
}

/**
 * A seed for a host-side generator (a loader's shuffle, a split), taken from the stream: it
 * names the current key and offset and moves the offset by one.
 */
export function nextSeed(): string {
  return `philox:${key0}:${key1}:${offset++}`;
}
