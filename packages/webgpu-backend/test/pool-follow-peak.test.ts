import { BufferPool, FOLLOW_MAX_BYTES } from '../src/pool';
import { fakeDevice } from './fake-device';

// A loop whose live set rises and falls each step (attention scores, a large batch) must find
// the buffers it freed in the pool next step: the pool keeps up to the peak of live bytes, not
// only its configured limit, so a steady loop stops creating buffers after its first step.

const MiB = 2 ** 20;

function steps(pool: BufferPool, n: number, bytes: number, perStep: number): void {
  for (let s = 0; s < n; s++) {
    const bufs = Array.from({ length: perStep }, () => pool.acquire(bytes, s, false, ''));
    bufs.forEach((b) => pool.release(b, s));
  }
}

test('past its limit the pool destroys what a step frees, unless it follows the peak', () => {
  const a = fakeDevice();
  const fixed = new BufferPool(a.device, 1 << 30, 64 * MiB, () => {});
  steps(fixed, 5, 48 * MiB, 4);
  // Four 48 MiB buffers a step, a 64 MiB limit: three of them are destroyed and made anew.
  expect(a.counts.created).toBeGreaterThanOrEqual(16);

  const b = fakeDevice();
  const following = new BufferPool(b.device, 1 << 30, 64 * MiB, () => {});
  following.followPeak(4 * 48 * MiB);
  steps(following, 5, 48 * MiB, 4);
  expect(b.counts.created).toBe(4);
  expect(b.counts.destroyed).toBe(0);
});

test('following the peak never lowers the limit and stops at FOLLOW_MAX_BYTES', () => {
  expect(FOLLOW_MAX_BYTES).toBe(4 * 2 ** 30);
  const { device, counts } = fakeDevice();
  const pool = new BufferPool(device, 1 << 30, 256 * MiB, () => {});
  pool.followPeak(16 * MiB);
  steps(pool, 3, 48 * MiB, 4);
  expect(counts.created).toBe(4);
  const big = fakeDevice();
  const capped = new BufferPool(big.device, 2 ** 31, 64 * MiB, () => {});
  capped.followPeak(64 * 2 ** 30);
  // 2 GiB buffers, three a step: 6 GiB freed a step, past the 4 GiB the pool may follow.
  steps(capped, 3, 2 ** 31, 3);
  expect(big.counts.destroyed).toBeGreaterThan(0);
});
