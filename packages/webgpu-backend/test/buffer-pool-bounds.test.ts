import { BUCKET_MAX_FREE, BufferPool, POOL_MAX_FREE } from '../src/pool';
import { fakeDevice } from './fake-device';

// The pool bounds how many free buffers it keeps, so a release costs a bounded amount of work:
// freeing 200,000 tiny tensors once kept all of them pooled, and each release walked its whole
// bucket (quadratic: minutes for a file of empty tensors).

test('the bounds are what the pool promises', () => {
  expect(BUCKET_MAX_FREE).toBe(1024);
  expect(POOL_MAX_FREE).toBe(8192);
});

test('releasing 100,000 buffers of one size is linear, and the bucket keeps its lowest ids', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1 << 30, () => {});
  const n = 100_000;
  const bufs = Array.from({ length: n }, () => pool.acquire(4, 0, false, 'fromData'));
  // In creation order (a dict of tensors disposed in order): each is the highest id so far.
  // Quadratic, this took ~80 s (past jest's limit); bounded, well under a second. The speed
  // itself is a bench figure, not an assertion: the bounds below are what keep it linear.
  bufs.forEach((b) => pool.release(b, 1));
  expect(pool.pooledBuffers).toBe(BUCKET_MAX_FREE);
  expect(counts.destroyed).toBe(n - BUCKET_MAX_FREE);
  // The kept ones are the lowest ids, handed out lowest first.
  const kept = Array.from({ length: BUCKET_MAX_FREE }, () => pool.acquire(4, 2, false, 'fromData'));
  expect(kept.every((b, i) => b === bufs[i])).toBe(true);
  kept.forEach((b) => pool.release(b, 2));
  expect(pool.acquire(4, 2, false, 'fromData')).toBe(bufs[0]);
  // A lower id released into the full bucket stays, and the highest kept one goes.
  const again = pool.acquire(4, 2, false, 'fromData');
  expect(again).toBe(bufs[1]);
  pool.release(bufs[0], 2);
  pool.release(again, 2);
  expect(pool.pooledBuffers).toBe(BUCKET_MAX_FREE);
  expect(counts.destroyed).toBe(n - BUCKET_MAX_FREE);
  pool.release(pool.acquire(4, 2, false, 'x'), 2); // a new buffer: the highest id, destroyed at once
  expect(counts.destroyed).toBe(n - BUCKET_MAX_FREE + 1);
});

test('in reverse order too, and with many buckets the total stays bounded (oldest released go)', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1 << 30, () => {}, 100);
  const bufs = Array.from({ length: 3000 }, () => pool.acquire(4, 0, false));
  for (let i = bufs.length - 1; i >= 0; i--) pool.release(bufs[i], 1);
  expect(pool.pooledBuffers).toBe(100);
  // Released last: ids 1..100 (the lowest), which the bucket hands out first.
  expect(pool.acquire(4, 2, false)).toBe(bufs[0]);
  // Buffers of many sizes: the total stays at the limit, and the oldest released are destroyed.
  const sized = [1, 2, 3, 4, 5].map((k) => pool.acquire(1024 * k, 2, false));
  const before = counts.destroyed;
  sized.forEach((b) => pool.release(b, 3));
  expect(pool.pooledBuffers).toBe(100);
  expect(counts.destroyed - before).toBe(sized.length - 1);
  expect(pool.acquire(5120, 4, false)).toBe(sized[4]);
});
