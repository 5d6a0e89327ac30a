import { Backend, CpuBackend, DTypeError, ValueError } from '@surf/core';
import { Tensor, bitwiseAnd, erf, gelu, remainder, round, setBackend, silu, tensor } from '@surf/autograd';
import { describeEach, gpuBackend } from '../gpu';

// The op table's newer raw ops through the Tensor API, against values worked out by hand or
// published (PyTorch's outputs where semantics are its own), on both backends.

async function close(t: Tensor, want: number[], rtol = 1e-6, atol = 1e-7): Promise<void> {
  const got = Array.from(await t.data());
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    const w = want[i];
    if (Number.isNaN(w)) expect([i, g]).toEqual([i, NaN]);
    else if (!Number.isFinite(w)) expect([i, g]).toEqual([i, w]);
    else expect([i, w, Math.abs(g - w) <= atol + rtol * Math.abs(w)]).toEqual([i, w, true]);
  });
}

describeEach(['cpu', 'webgpu'] as const, 'op-table ops on %s', (kind) => {
  let backend: Backend | null = null;
  let prev: Backend | null = null;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    if (backend) prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    if (kind === 'webgpu') backend?.destroy();
  });

  test('rounding: half to even, int inputs unchanged, decimals', async () => {
    const x = tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 2.3]);
    await close(x.round(), [-2, -2, -0, 0, 2, 2, -1, 2], 0, 0);
    await close(x.floor(), [-3, -2, -1, 0, 1, 2, -1, 2], 0, 0);
    await close(x.ceil(), [-2, -1, -0, 1, 2, 3, -0, 3], 0, 0);
    await close(x.trunc(), [-2, -1, -0, 0, 1, 2, -0, 2], 0, 0);
    await close(round(tensor([1.2345, -2.675, 123.5]), 2), [1.23, -2.68, 123.5], 1e-6);
    await close(round(tensor([1234.5, -1250]), -2), [1200, -1200], 0, 0);
    const i = tensor([3, -4, 0], { dtype: 'int32' });
    for (const r of [i.floor(), i.ceil(), i.round(), i.trunc()]) {
      expect(r.dtype).toBe('int32');
      expect(await r.toArray()).toEqual([3, -4, 0]);
    }
  });

  test('sign (NaN gives 0, as PyTorch) on float and int', async () => {
    await close(tensor([-3, -0, 0, 2.5, NaN, -Infinity]).sign(), [-1, 0, 0, 1, 0, -1], 0, 0);
    const s = tensor([-7, 0, 9], { dtype: 'int32' }).sign();
    expect([s.dtype, await s.toArray()]).toEqual(['int32', [-1, 0, 1]]);
  });

  test('remainder takes the divisor sign (Python %), ints stay ints', async () => {
    await close(tensor([-3, -2, -1, 1, 2, 3]).float().remainder(2), [1, 0, 1, 1, 0, 1], 0, 0);
    await close(tensor([-3, -1, 1, 3.5]).remainder(-1.5), [-0, -1, -0.5, -1], 1e-6);
    await close(tensor([5.5]).remainder(0), [NaN]);
    const r = remainder(tensor([-7, 7, -7, 7, 5], { dtype: 'int32' }), tensor([3, -3, -3, 3, 0], { dtype: 'int32' }));
    expect([r.dtype, await r.toArray()]).toEqual(['int32', [2, -2, -1, 1, 0]]);
  });

  test('bitwise and/or/xor on int32 and bool; floats refused', async () => {
    const a = tensor(Int32Array.from([12, -1, 5, -2147483648])),
      b = tensor(Int32Array.from([10, 7, 3, -1]));
    expect(await a.bitwiseAnd(b).toArray()).toEqual([8, 7, 1, -2147483648]);
    expect(await a.bitwiseOr(b).toArray()).toEqual([14, -1, 7, -1]);
    expect(await a.bitwiseXor(b).toArray()).toEqual([6, -8, 6, 2147483647]);
    expect(await bitwiseAnd(a, 6).toArray()).toEqual([4, 6, 4, 0]);
    const p = tensor([true, true, false, false]),
      q = tensor([true, false, true, false]);
    expect(await p.bitwiseAnd(q).toArray()).toEqual([true, false, false, false]);
    expect(await p.bitwiseOr(q).toArray()).toEqual([true, true, true, false]);
    expect(await p.bitwiseXor(q).toArray()).toEqual([false, true, true, false]);
    expect(() => tensor([1.5]).bitwiseAnd(tensor([1]))).toThrow(DTypeError);
    expect(() => tensor([1]).bitwiseOr(0.5)).toThrow(/bitwiseOr: got dtype float32; expected int32 or bool/);
  });

  test('erf, tanh, log1p, expm1: published values, and accurate where composites cancel', async () => {
    await close(
      erf(tensor([0, 0.1, 0.5, 1, 2, 3, -1.5, 5])),
      [0, 0.112462916, 0.5204998778, 0.8427007929, 0.995322265, 0.9999779095, -0.9661051465, 1],
      2e-6,
      1e-7,
    );
    await close(tensor([1e-5, -3e-4]).erf(), [1.1283791671e-5, -3.3851374e-4], 2e-6, 0);
    await close(tensor([-30, -1, 1e-4, 0.5, 30]).tanh(), [-1, -0.761594156, 9.9999999667e-5, 0.4621171573, 1], 2e-6, 0);
    await close(
      tensor([1e-7, -1e-4, 0.25, 3, -0.9]).log1p(),
      [9.9999995e-8, -1.000050003e-4, 0.2231435513, 1.3862943611, -2.302585093],
      2e-6,
      0,
    );
    await close(
      tensor([1e-7, -1e-4, 0.25, 3, -20]).expm1(),
      [1.00000005e-7, -9.9995000167e-5, 0.2840254167, 19.085536923, -0.9999999979],
      2e-6,
      0,
    );
    await close(tensor([-1]).log1p(), [-Infinity]);
    await close(tensor([-2]).log1p(), [NaN]);
  });

  test('silu and gelu (PyTorch values), min propagates NaN', async () => {
    await close(silu(tensor([-2, 0, 1, 20])), [-0.238405844, 0, 0.7310585786, 19.999999958], 2e-6, 1e-7);
    await close(gelu(tensor([-1, 0, 1, 2])), [-0.1586552539, 0, 0.8413447461, 1.9544997361], 2e-6, 1e-7);
    await close(tensor([-1, 1]).gelu('tanh'), [-0.1588080093, 0.8411919907], 2e-6, 1e-7);
    await close(tensor([1, NaN, -2]).minimum(tensor([0, 3, NaN])), [0, NaN, NaN]);
    // softplus' tail through log1p: log(1 + 1e-9) would round to 0.
    await close(tensor([-20.723265837]).softplus(), [1e-9], 1e-5, 0);
  });

  test('erf/log1p/expm1 promote ints to float32; round rejects fractional decimals', async () => {
    expect(tensor([0, 1]).erf().dtype).toBe('float32');
    expect(tensor([0]).expm1().dtype).toBe('float32');
    expect(() => tensor([1.5]).round(0.5)).toThrow(ValueError);
    expect(() => tensor([true]).floor()).toThrow(/floor: got dtype bool/);
  });
});
