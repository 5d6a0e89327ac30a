import { Backend, CpuBackend, DTypeError, ValueError } from '@surf/core';
import {
  Tensor,
  bernoulli,
  dropout,
  getRngState,
  jit,
  manualSeed,
  rand,
  randint,
  randn,
  randperm,
  setBackend,
  setRngState,
  tensor,
} from '@surf/autograd';
import fixtures from '../../../test-support/fixtures/philox.json';
import { testEach, testGpu } from './gpu';
import { gpuBackend } from './gpu';

// The global Philox stream through the public API, on both backends. Reference values are the
// numpy script's (scripts/rng/make-philox-fixtures.py); the statistics use fixed seeds, so the
// bounds below are fixed numbers (chosen at about 4 sigma), not flaky.

const kinds = ['cpu', 'webgpu'] as const;

async function on<T>(kind: (typeof kinds)[number], fn: () => Promise<T>): Promise<T> {
  const b: Backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
  const prev = setBackend(b);
  try {
    return await fn();
  } finally {
    setBackend(prev);
    b.destroy();
  }
}

const values = async (t: Tensor) => Array.from((await t.data()) as ArrayLike<number>);

/** Kolmogorov-Smirnov distance between the sample and a CDF. */
function ks(xs: number[], cdf: (x: number) => number): number {
  const s = xs.slice().sort((a, b) => a - b);
  let d = 0;
  s.forEach((x, i) => {
    const f = cdf(x);
    d = Math.max(d, Math.abs(f - i / s.length), Math.abs((i + 1) / s.length - f));
  });
  return d;
}

/** The standard normal CDF (Abramowitz & Stegun 26.2.17, error < 7.5e-8). */
function phi(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const poly = t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  const q = (Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI)) * poly;
  return x >= 0 ? 1 - q : q;
}

const meanVar = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return [m, xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length];
};

// KS critical value at alpha = 0.001 for n = 10,000: 1.95 / sqrt(n).
const KS_CRIT = 1.95 / Math.sqrt(10000);

testEach(
  kinds,
  'rand/randint follow the reference stream on %s (seed -> key, offset advances by ceil(n / 4))',
  (kind) =>
    on(kind, async () => {
      const d42 = fixtures.draws.find((d) => d.seed === 42 && d.offset === 0)!;
      const d42b = fixtures.draws.find((d) => d.seed === 42 && d.offset === 2)!;
      manualSeed(42);
      // An empty draw takes no counters.
      expect(rand([0, 3]).shape).toEqual([0, 3]);
      expect(await values(randn([2, 0]))).toEqual([]);
      expect(getRngState()).toEqual({ key: [42, 0], offset: 0 });
      expect(await values(rand([2, 4]))).toEqual(d42.uniform);
      expect(getRngState().offset).toBe(2); // four values per counter
      expect(await values(rand([8]))).toEqual(d42b.uniform);
      manualSeed(42);
      const r = d42.randint;
      expect(await values(randint(r.low, r.high, [8]))).toEqual(r.values);
      // A 64-bit seed and an offset that carries into the counter's high word.
      const big = fixtures.draws.find((d) => d.seed === 2 ** 32 + 7)!;
      manualSeed(2 ** 32 + 7);
      expect(getRngState().key).toEqual(big.key);
      setRngState({ key: [big.key[0], big.key[1]], offset: big.offset });
      expect(await values(rand([7]))).toEqual(big.uniform);
      setRngState({ key: [big.key[0], big.key[1]], offset: big.offset });
      const z = await values(randn([7]));
      z.forEach((v, i) => expect(Math.abs(v - big.normal[i])).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(v))));
    }),
);

testEach(kinds, 'statistics of 10k draws on %s: uniform, normal, randint, bernoulli', (kind) =>
  on(kind, async () => {
    manualSeed(123);
    const u = await values(rand([100, 100]));
    const [mu, vu] = meanVar(u);
    expect(Math.abs(mu - 0.5)).toBeLessThan(0.012);
    expect(Math.abs(vu - 1 / 12)).toBeLessThan(0.004);
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...u)).toBeLessThan(1);
    expect(ks(u, (x) => Math.min(1, Math.max(0, x)))).toBeLessThan(KS_CRIT);
    const z = await values(randn([10000]));
    const [mz, vz] = meanVar(z);
    expect(Math.abs(mz)).toBeLessThan(0.04);
    expect(Math.abs(vz - 1)).toBeLessThan(0.06);
    expect(ks(z, phi)).toBeLessThan(KS_CRIT);
    const k = await values(randint(-3, 4, [10000]));
    const counts = new Array(7).fill(0);
    k.forEach((v) => counts[v + 3]++);
    expect(Math.min(...k)).toBe(-3);
    expect(Math.max(...k)).toBe(3);
    // chi-square with 6 degrees of freedom: 22.5 is its 0.999 quantile.
    const chi = counts.reduce((a, c) => a + (c - 10000 / 7) ** 2 / (10000 / 7), 0);
    expect(chi).toBeLessThan(22.5);
    const b = await values(bernoulli(tensor(new Float32Array(10000).fill(0.3))));
    expect(b.every((v) => v === 0 || v === 1)).toBe(true);
    expect(Math.abs(b.reduce((a, v) => a + v, 0) / 10000 - 0.3)).toBeLessThan(0.02);
    const b2 = await values(bernoulli(0.8, [10000]));
    expect(Math.abs(b2.reduce((a, v) => a + v, 0) / 10000 - 0.8)).toBeLessThan(0.016);
  }),
);

testEach(kinds, 'dropout on %s: p honoured, survivors scaled by 1/(1-p), gradient through the same mask', (kind) =>
  on(kind, async () => {
    manualSeed(5);
    const x = tensor(
      Float32Array.from({ length: 10000 }, (_, i) => 1 + (i % 7)),
      { requiresGrad: true },
    );
    const y = dropout(x, 0.3);
    const yv = await values(y);
    const xv = await values(x);
    const kept = yv.map((v) => v !== 0);
    expect(Math.abs(kept.filter((k) => !k).length / 10000 - 0.3)).toBeLessThan(0.02);
    expect(yv.filter((v, i) => kept[i] && Math.abs(v - xv[i] / 0.7) > 1e-5 * v)).toEqual([]);
    y.mul(tensor(Float32Array.from({ length: 10000 }, (_, i) => (i % 3) - 1)))
      .sum()
      .backward();
    const g = await values(x.grad!);
    expect(g.filter((v, i) => Math.abs(v - (kept[i] ? ((i % 3) - 1) / 0.7 : 0)) > 1e-5)).toEqual([]);
    // The default p is 0.5; training false and p 0 are the identity; p 1 zeroes everything.
    manualSeed(6);
    const h = await values(dropout(x));
    expect(Math.abs(h.filter((v) => v === 0).length / 10000 - 0.5)).toBeLessThan(0.02);
    expect(dropout(x, 0.5, false)).toBe(x);
    expect(dropout(x, 0)).toBe(x);
    expect((await values(dropout(x, 1))).every((v) => v === 0)).toBe(true);
    expect(() => dropout(x, 1.5)).toThrow(ValueError);
  }),
);

test('CPU and WebGPU draw the same values for the same seed', async () => {
  const draw = () => {
    manualSeed('same');
    return Promise.all([
      values(rand([3, 50])),
      values(randint(0, 1000, [77])),
      values(dropout(tensor(new Float32Array(200).fill(2)), 0.4)),
      values(randn([300])),
    ]);
  };
  const c = await on('cpu', draw);
  if (!(await import('./gpu')).gpuAvailable) return;
  const g = await on('webgpu', draw);
  expect(g.slice(0, 3)).toEqual(c.slice(0, 3));
  g[3].forEach((v, i) => expect(Math.abs(v - c[3][i])).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(v))));
});

testEach(kinds, 'jit replays draw fresh values and advance the stream as eager calls do, on %s', (kind) =>
  on(kind, async () => {
    const f = (x: Tensor) => dropout(x, 0.5).add(rand([4]));
    const x = tensor([1, 2, 3, 4]).float();
    manualSeed(9);
    const eager: number[][] = [];
    for (let i = 0; i < 4; i++) eager.push(await values(f(x)));
    const after = getRngState();
    manualSeed(9);
    const g = jit(f);
    const jitted: number[][] = [];
    for (let i = 0; i < 4; i++) jitted.push(await values(g(x)));
    expect(g.stats.replayed).toBeGreaterThan(0);
    expect(jitted).toEqual(eager);
    expect(getRngState()).toEqual(after);
    expect(new Set(eager.map((r) => r.join())).size).toBe(4);
  }),
);

test('dtype: rand/randn make float32 and refuse others; randint makes int32', () => {
  expect(rand([2], { dtype: 'float32' }).dtype).toBe('float32');
  expect(randn([2]).dtype).toBe('float32');
  expect(() => rand([2], { dtype: 'int32' as 'float32' })).toThrow(DTypeError);
  expect(() => randn([2], { dtype: 'bool' as 'float32' })).toThrow(/randn: dtype "bool"; randn makes float32 only/);
  expect(randint(0, 3, [2]).dtype).toBe('int32');
  expect(() => randint(0, 3, [2], { dtype: 'float32' as 'int32' })).toThrow(DTypeError);
  expect(() => rand([2], { dtyp: 'float32' } as never)).toThrow(/did you mean/);
  expect(rand([2], { requiresGrad: true }).requiresGrad).toBe(true);
  expect(() => randint(0, 2 ** 31 + 1, [1])).toThrow(/leaves int32/);
  expect(() => randint(3, 3, [1])).toThrow(/high > low/);
});

test('get/setRngState: a saved state replays; bad states are refused', async () => {
  manualSeed(77);
  rand([5]);
  const s = getRngState();
  expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  const a = await values(randn([10]));
  setRngState(s);
  expect(await values(randn([10]))).toEqual(a);
  manualSeed(78);
  expect(await values(randn([10]))).not.toEqual(a);
  expect(() => setRngState({ key: [1, 2], offset: -1 })).toThrow(/offset -1/);
  expect(() => setRngState({ key: [1, 2 ** 32], offset: 0 })).toThrow(/two u32 integers/);
  expect(() => setRngState({ key: [1, 2], offset: 0, seed: 3 } as never)).toThrow(/unknown key "seed"/);
  expect(() => setRngState(null as never)).toThrow(/got null/);
  // String seeds hash to a key; the same string gives the same key.
  manualSeed('abc');
  const k = getRngState().key;
  manualSeed('abc');
  expect(getRngState().key).toEqual(k);
  manualSeed('abd');
  expect(getRngState().key).not.toEqual(k);
});

test('randperm: a permutation, seeded', async () => {
  manualSeed(4);
  const p = await values(randperm(50));
  expect(p.slice().sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect(p).not.toEqual(Array.from({ length: 50 }, (_, i) => i));
  manualSeed(4);
  expect(await values(randperm(50))).toEqual(p);
  expect(() => randperm(-1)).toThrow(ValueError);
});

testGpu("dropout and bernoulli draw on their input's backend, not the current one", async () => {
  const gpu = await gpuBackend();
  const prev = setBackend(new CpuBackend());
  try {
    manualSeed(12);
    const x = tensor(new Float32Array(64).fill(1)).to(gpu);
    const y = dropout(x, 0.5);
    const b = bernoulli(x.mul(0.5));
    expect([y.ndarray.backend, b.ndarray.backend]).toEqual([gpu, gpu]);
    expect((await values(y)).every((v) => v === 0 || v === 2)).toBe(true);
  } finally {
    setBackend(prev);
    gpu.destroy();
  }
});
