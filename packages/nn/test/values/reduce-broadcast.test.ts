import { ones, tensor } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// Reductions over broadcast views of 2^32 or more elements: a u32 element index would wrap
// (WebGPU summed 0 and took the max as -Infinity). Expected values are plain arithmetic.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());

testEach(['cpu', 'webgpu'], 'sum, mean and max of a 65536 x 65536 broadcast view on %s', (k) =>
  on(pick(k), async () => {
    const big = ones([1, 1]).expand([65536, 65536]);
    expect(await big.sum().item()).toBe(4294967296);
    expect(await big.mean().item()).toBe(1);
    expect(await big.max().item()).toBe(1);
    // One broadcast axis reduced, one kept; and a mixed view (a real axis times a broadcast one).
    const rows = await ones([1, 1]).expand([65536, 65536]).sum(1).data();
    expect(rows.length).toBe(65536);
    expect(rows.every((v) => v === 65536)).toBe(true);
    const mixed = tensor([1, -2, 3], { dtype: 'float32' }).reshape([3, 1, 1]).expand([3, 65536, 32768]);
    expect(await mixed.sum().item()).toBe(2 * 65536 * 32768);
    expect(await mixed.max().item()).toBe(3);
    expect(Array.from(await mixed.sum([1, 2]).data())).toEqual([2147483648, -4294967296, 6442450944]);
    // int32 sums wrap modulo 2^32 as repeated addition does (PyTorch's int32 sum wraps as well).
    const ints = tensor([3], { dtype: 'int32' }).reshape([1, 1]).expand([5, 7]);
    expect(await ints.sum().item()).toBe(105);
  }),
);
