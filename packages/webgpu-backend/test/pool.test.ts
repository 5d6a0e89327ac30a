import { BufferPool, SITE_HOLD, SITE_MAX_BYTES } from '../src/pool';
import { fakeDevice } from './fake-device';

// The buffer pool's byte limit, with a stand-in device that counts buffers made and destroyed:
// past the limit the least recently released buffers go, so a workload whose sizes change
// reuses its new sizes instead of creating and destroying a buffer on every allocation.

test('past its limit the pool drops the buffers released longest ago, not the one just released', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 4096, () => {});
  // An old workload fills the pool with 1 KiB buffers.
  const old = [0, 1, 2, 3].map(() => pool.acquire(1024, 0, false));
  old.forEach((b) => pool.release(b, 1));
  expect(pool.pooledBytes).toBe(4096);
  // A new workload cycles 2 KiB buffers: after the first round they come from the pool.
  for (let step = 0; step < 5; step++) {
    const a = pool.acquire(2048, 0, false),
      b = pool.acquire(2048, 0, false);
    pool.release(a, 1);
    pool.release(b, 1);
  }
  expect(counts.created).toBe(4 + 2);
  expect(counts.destroyed).toBe(4);
  expect(pool.pooledBytes).toBe(4096);
  expect(pool.pooledBuffers).toBe(2);
});

test('a buffer the open batch binds is destroyed only after that batch is submitted', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1024, () => {});
  const a = pool.acquire(1024, 7, false);
  a.lastBatch = 7;
  pool.release(a, 7);
  const b = pool.acquire(512, 7, false);
  // a is the oldest and bound by batch 7, still open: evicted, but not destroyed yet.
  pool.release(b, 7);
  expect(counts.destroyed).toBe(0);
  pool.afterSubmit();
  expect(counts.destroyed).toBe(1);
  // Larger than the whole pool: never pooled.
  pool.release(pool.acquire(4096, 8, false), 8);
  expect(counts.destroyed).toBe(2);
  expect(pool.pooledBytes).toBe(512);
});

// Buffers come back in whatever order tensors are freed (a loop without tidy frees them when
// V8 collects); the pool hands out the lowest id first, so a loop keeps binding the same few
// buffers and finds its bind groups cached. An upload skips buffers the open batch binds.
test('a bucket hands out its lowest-id free buffer, whatever order they came back in', () => {
  const { device } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1 << 20, () => {});
  const bufs = [0, 1, 2, 3, 4].map(() => pool.acquire(1024, 0, false));
  for (const i of [3, 0, 4, 2, 1]) pool.release(bufs[i], 1);
  expect(pool.acquire(1024, 2, false)).toBe(bufs[0]);
  expect(pool.acquire(1024, 2, false)).toBe(bufs[1]);
  pool.release(bufs[0], 2);
  expect(pool.acquire(1024, 2, false)).toBe(bufs[0]);
  bufs[2].lastBatch = 5;
  expect(pool.acquire(1024, 5, true)).toBe(bufs[3]);
  expect(pool.acquire(1024, 5, false)).toBe(bufs[2]);
  expect(pool.acquire(1024, 5, false)).toBe(bufs[4]);
  expect(pool.pooledBuffers).toBe(0);
});

// A freed buffer goes back to the op that released it first (its site), and to another op
// only after SITE_HOLD acquires: in a loop without tidy, the next step's logits (held by V8
// until it collects) must not take the buffer of the logits' gradient, freed every step.
test('a freed buffer waits for its own site; another site takes it only once it has sat free', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1 << 20, () => {});
  const logits = pool.acquire(2560, 0, false, 'matmul');
  const grad = pool.acquire(2560, 0, false, 'elementwise');
  pool.release(grad, 1);
  // The next step: the logits op gets a new buffer (the old logits are still alive), the gradient its own.
  const logits2 = pool.acquire(2560, 1, false, 'matmul');
  expect(logits2).not.toBe(grad);
  expect(pool.acquire(2560, 1, false, 'elementwise')).toBe(grad);
  expect(counts.created).toBe(3);
  // Of two free buffers, a site takes its own even when the other has the lower id.
  pool.release(logits, 2);
  pool.release(grad, 2);
  expect(logits.id).toBeLessThan(grad.id);
  expect(pool.acquire(2560, 2, false, 'elementwise')).toBe(grad);
  // Once free for SITE_HOLD acquires, a buffer goes to any site.
  for (let i = 0; i < SITE_HOLD; i++) pool.release(pool.acquire(256, 3, false, 'other'), 3);
  expect(pool.acquire(2560, 3, false, 'elementwise2')).toBe(logits);
  expect(counts.created).toBe(4);
  // A large buffer goes to whichever op asks first (holding it would cost memory).
  const big = pool.acquire(SITE_MAX_BYTES * 2, 4, false, 'matmul');
  pool.release(big, 4);
  expect(pool.acquire(SITE_MAX_BYTES * 2, 4, false, 'elementwise')).toBe(big);
  void logits2;
});

// Past SITE_MAX_BYTES no site is held and the whole bucket is looked at: an upload skips
// every buffer the open batch binds and still finds the free one behind them.
test('a large bucket is searched whole for a buffer an upload may take', () => {
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 1 << 30, () => {});
  const bufs = Array.from({ length: 70 }, () => pool.acquire(SITE_MAX_BYTES * 2, 0, false, 'matmul'));
  bufs.forEach((b, i) => {
    b.lastBatch = i === 69 ? 1 : 2;
    pool.release(b, 2);
  });
  expect(pool.acquire(SITE_MAX_BYTES * 2, 2, true, 'fromData')).toBe(bufs[69]);
  expect(counts.created).toBe(70);
});
