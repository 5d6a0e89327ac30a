import { BackendError } from '@surf/core';
import { unsignedAddress, wordAt } from '../src/cpu/wasm/address';
import { Arena } from '../src/cpu/wasm/arena';
import { memoryLimitError } from '../src/cpu/wasm/memory-limit';
import { ArrayPool, RESIDENT_MIN } from '../src/cpu/pool';
import { WORKER_SOURCE } from '../src/cpu/threads/worker-source';

// The CPU backend's linear memory runs to 4 GiB of unsigned byte addresses. CI cannot
// allocate 2 GiB, so the address math is tested on its own and the limit with a small one.

test('element indices of byte addresses past 2 GiB stay positive (given as numbers or as i32 words)', () => {
  expect(wordAt(2 ** 31)).toBe(2 ** 29);
  expect(wordAt(2 ** 32 - 4)).toBe(2 ** 30 - 1);
  // An address stored in an Int32Array word reads back negative past 2 GiB.
  const w = new Int32Array([2 ** 31 + 64, 2 ** 32 - 65536]);
  expect(w[0]).toBeLessThan(0);
  expect(wordAt(w[0])).toBe((2 ** 31 + 64) / 4);
  expect(wordAt(w[1])).toBe((2 ** 32 - 65536) / 4);
  expect(unsignedAddress(w[0])).toBe(2 ** 31 + 64);
  expect(wordAt(65536)).toBe(16384);
});

test('the worker threads read job and load addresses unsigned', () => {
  // Every shift of an address in the worker's source is the unsigned one.
  expect(WORKER_SOURCE).not.toMatch(/[^>]>>2/);
  expect(WORKER_SOURCE).toMatch(/C\.JOB\)>>>2/);
  expect(WORKER_SOURCE).toMatch(/C\.LOAD_AT\)>>>2/);
});

test('an arena stops at its limit; storages then come from the JS heap, and the error is clear', () => {
  const arena = new Arena(false, 4 * 65536);
  expect(arena.limitBytes).toBe(4 * 65536);
  const a = arena.alloc(65536);
  expect(a).toBeGreaterThan(0);
  expect(arena.alloc(4 * 65536)).toBe(0); // past the limit: refused, memory not grown
  expect(arena.memory.buffer.byteLength).toBeLessThanOrEqual(4 * 65536);
  const pool = new ArrayPool(0, 256, 8, arena);
  const big = pool.take('float32', 4 * 65536);
  expect(arena.addressOf(big)).toBe(-1);
  expect(big.length).toBe(4 * 65536);
  const small = pool.take('float32', RESIDENT_MIN);
  expect(arena.addressOf(small)).toBeGreaterThan(0);
  // The default is wasm32's 4 GiB less a page.
  expect(new Arena(false).limitBytes).toBe(2 ** 32 - 65536);
  const err = memoryLimitError(new Arena(false), 'a job');
  expect(err).toBeInstanceOf(BackendError);
  expect(err.message).toMatch(
    /CPU backend memory limit 4 GiB reached \(a job; \d+ bytes held by live tensors\); dispose tensors or use tidy/,
  );
});
