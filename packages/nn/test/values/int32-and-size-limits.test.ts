import { ValueError, arange, eye, full, linspace, ones, rand, randint, randn, tensor, zeros } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// int32 values are never saturated or wrapped silently, and sizes no backend can hold are
// refused before any host array or device buffer is made.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());

testEach(['cpu', 'webgpu'], 'int32 data and fill values outside int32 are refused on %s', (k) =>
  on(pick(k), async () => {
    expect(() => tensor([3000000000], { dtype: 'int32' })).toThrow(ValueError);
    expect(() => tensor([1, -2147483649], { dtype: 'int32' })).toThrow(
      /tensor: element 1 -2147483649 does not fit int32/,
    );
    expect(() => tensor([Infinity], { dtype: 'int32' })).toThrow(ValueError);
    expect(() => tensor([NaN], { dtype: 'int32' })).toThrow(ValueError);
    expect(() => full([2], 2 ** 31, { dtype: 'int32' })).toThrow(/full: fill value 2147483648 does not fit int32/);
    // The edges of the range are kept exactly; floats truncate toward zero as a cast does.
    expect(Array.from(await tensor([2147483647, -2147483648, -1.5], { dtype: 'int32' }).data())).toEqual([
      2147483647, -2147483648, -1,
    ]);
    expect(Array.from(await full([1], -(2 ** 31), { dtype: 'int32' }).data())).toEqual([-2147483648]);
    // Integer tensors made from large integers stay exact when float32 is asked for.
    expect(await tensor([3000000000], { dtype: 'float32' }).item()).toBe(3000000000);
  }),
);

testEach(['cpu', 'webgpu'], 'an int32 tensor with a number it cannot hold is refused, not wrapped, on %s', (k) =>
  on(pick(k), async () => {
    const a = tensor([1, 2], { dtype: 'int32' });
    expect(() => a.add(2 ** 31)).toThrow(/add: number operand 2147483648 does not fit int32/);
    expect(() => a.mul(3e9)).toThrow(ValueError);
    expect(() => a.sub(-(2 ** 31) - 1)).toThrow(ValueError);
    // In range it stays int32 and exact; a float32 tensor takes any number.
    expect(Array.from(await a.add(2147483645).data())).toEqual([2147483646, 2147483647]);
    expect(a.add(2147483645).dtype).toBe('int32');
    expect(
      Array.from(
        await tensor([2], { dtype: 'float32' })
          .mul(2 ** 31)
          .data(),
      ),
    ).toEqual([2 ** 32]);
    // A non-integer number promotes to float32 (PyTorch: int tensor * 0.5 is float).
    expect(Array.from(await a.mul(0.5).data())).toEqual([0.5, 1]);
  }),
);

testEach(['cpu', 'webgpu'], 'randint bounds beyond int32 are refused on %s', (k) =>
  on(pick(k), async () => {
    expect(() => randint(0, 2 ** 32, [4])).toThrow(/randint: range \[0, 4294967296\) leaves int32/);
    expect(() => randint(-(2 ** 31) - 1, 0, [4])).toThrow(ValueError);
    expect(() => randint(3, 3, [4])).toThrow(ValueError);
    const v = await randint(2 ** 31 - 4, 2 ** 31, [64]).data();
    expect(v.every((x) => x >= 2 ** 31 - 4 && x <= 2 ** 31 - 1)).toBe(true);
  }),
);

testEach(['cpu', 'webgpu'], 'sizes past the limit are refused before allocation on %s', (k) =>
  on(pick(k), () => {
    const before = process.memoryUsage().rss;
    const started = Date.now();
    expect(() => arange(0, 2 ** 31)).toThrow(/arange: a int32 tensor of 2147483648 elements/);
    expect(() => arange(0, 1e10)).toThrow(ValueError);
    expect(() => arange(0, 1e10, 0.5)).toThrow(ValueError);
    expect(() => zeros([2 ** 31])).toThrow(/a float32 tensor of 2147483648 elements .* larger than the limit/);
    expect(() => ones([65536, 65536])).toThrow(ValueError);
    expect(() => full([2 ** 16, 2 ** 16], 1)).toThrow(ValueError);
    expect(() => rand([2 ** 31])).toThrow(ValueError);
    expect(() => randn([2 ** 20, 2 ** 12])).toThrow(ValueError);
    expect(() => randint(0, 5, [2 ** 31])).toThrow(ValueError);
    expect(() => linspace(0, 1, 2 ** 31)).toThrow(ValueError);
    expect(() => eye(2 ** 16)).toThrow(ValueError);
    // A broadcast result larger than any input is refused before the backend allocates it.
    const row = ones([1, 65536]);
    const col = ones([65536, 1]);
    expect(() => row.add(col)).toThrow(/add: a float32 tensor of 4294967296 elements/);
    // Nothing was built first: no gigabytes, no long loop.
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 2 ** 20);
    expect(Date.now() - started).toBeLessThan(5000);
  }),
);
