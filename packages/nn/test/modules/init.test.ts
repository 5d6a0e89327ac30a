import { Tensor, ValueError, manualSeed, nn, zeros } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// nn.init's normal family and orthogonal: the moments PyTorch's formulas give, bounds,
// orthogonality, on the CPU and on WebGPU; calculateGain's table.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);
const init = nn.init;

function moments(v: ArrayLike<number>): { mean: number; std: number; min: number; max: number } {
  let s = 0,
    s2 = 0,
    min = Infinity,
    max = -Infinity;
  for (let i = 0; i < v.length; i++) {
    s += v[i];
    s2 += v[i] * v[i];
    min = Math.min(min, v[i]);
    max = Math.max(max, v[i]);
  }
  const mean = s / v.length;
  return { mean, std: Math.sqrt(s2 / v.length - mean * mean), min, max };
}
const read = async (t: Tensor) => Array.from((await t.data()) as Float32Array);

testEach(['cpu', 'webgpu'], 'kaimingNormal and xavierNormal have the std of their formula (%s)', (kind) =>
  on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
    manualSeed(1);
    // fanIn = 50·4 = 200, fanOut = 100·4 = 400.
    const k = await read(init.kaimingNormal(zeros([100, 50, 2, 2])));
    expect(moments(k).std).toBeCloseTo(Math.SQRT2 / Math.sqrt(200), 2);
    const kOut = await read(init.kaimingNormal(zeros([100, 50, 2, 2]), { mode: 'fanOut', nonlinearity: 'relu' }));
    expect(moments(kOut).std).toBeCloseTo(Math.SQRT2 / Math.sqrt(400), 2);
    const x = await read(init.xavierNormal(zeros([100, 50, 2, 2]), 2));
    expect(Math.abs(moments(x).std / (2 * Math.sqrt(2 / 600)) - 1)).toBeLessThan(0.03);
  }),
);

testEach(['cpu', 'webgpu'], 'truncNormal stays in [a, b] with the truncated moments (%s)', (kind) =>
  on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
    manualSeed(2);
    // N(0, 1) on [−2, 2]: std √(1 − 4φ(2)/(Φ(2) − Φ(−2))) = 0.8796.
    const m = moments(await read(init.truncNormal(zeros([40000]))));
    expect(m.min).toBeGreaterThanOrEqual(-2);
    expect(m.max).toBeLessThanOrEqual(2);
    expect(m.max).toBeGreaterThan(1.95);
    expect(Math.abs(m.mean)).toBeLessThan(0.02);
    expect(Math.abs(m.std - 0.8796)).toBeLessThan(0.01);
    // One-sided: N(1, 0.5²) on [1, 5] is a half-normal: mean 1 + 0.5·√(2/π).
    const h = moments(await read(init.truncNormal(zeros([40000]), { mean: 1, std: 0.5, a: 1, b: 5 })));
    expect(h.min).toBeGreaterThanOrEqual(1);
    expect(Math.abs(h.mean - (1 + 0.5 * Math.sqrt(2 / Math.PI)))).toBeLessThan(0.01);
  }),
);

testEach(['cpu', 'webgpu'], 'orthogonal gives orthonormal rows or columns, times gain (%s)', (kind) =>
  on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
    manualSeed(3);
    for (const [shape, gain] of [
      [[6, 4], 1],
      [[3, 2, 4], 2],
    ] as [number[], number][]) {
      const t = init.orthogonal(zeros(shape), gain);
      expect(t.shape).toEqual(shape);
      const m = t.reshape([shape[0], -1]);
      const small = shape[0] < m.shape[1] ? m.matmul(m.transpose(0, 1)) : m.transpose(0, 1).matmul(m);
      const g = await read(small);
      const n = Math.sqrt(g.length);
      g.forEach((v, i) => expect(Math.abs(v - (i % (n + 1) === 0 ? gain * gain : 0))).toBeLessThan(1e-5));
    }
  }),
);

test("calculateGain follows PyTorch's table", () => {
  expect(init.calculateGain('selu')).toBe(0.75);
  expect(init.calculateGain('conv2d')).toBe(1);
  expect(init.calculateGain('tanh')).toBeCloseTo(5 / 3, 12);
  expect(init.calculateGain('leakyRelu', 0.2)).toBeCloseTo(Math.sqrt(2 / 1.04), 12);
  expect(() => init.kaimingNormal(zeros([2, 2]), { mode: 'fan_in' as never })).toThrow(ValueError);
  expect(() => init.orthogonal(zeros([3]))).toThrow(/at least 2 dims/);
});
