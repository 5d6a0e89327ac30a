import { CpuBackend, NDArray, cosTurnF32, logF32, philox4x32, sinTurnF32 } from '@surf/core';
import fixtures from '../../../test-support/fixtures/philox.json';

// Reference values come from scripts/rng/make-philox-fixtures.py (numpy uint64 arithmetic,
// which also asserts Random123's published known-answer vectors before writing them).

test('philox4x32-10 matches the Random123 known-answer vectors', () => {
  expect(fixtures.kat).toHaveLength(3);
  const w = new Uint32Array(4);
  for (const { ctr, key, out } of [...fixtures.kat, ...fixtures.more]) {
    philox4x32(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1], w);
    expect(Array.from(w)).toEqual(out);
  }
});

// The published vectors in hex, as Random123's kat_vectors file lists them.
test('the fixture holds the published vectors', () => {
  expect(fixtures.kat.map((k) => k.out.map((v) => v.toString(16).padStart(8, '0')).join(' '))).toEqual([
    '6627e8d5 e169c58d bc57ac4c 9b00dbd8',
    '408f276d 41c83b0e a20bc7c6 6d5451fd',
    'd16cfe09 94fdcceb 5001e420 24126ea1',
  ]);
});

function stateOf(d: { key: number[]; offset: number }): Int32Array {
  return Int32Array.from([d.key[0], d.key[1], d.offset % 2 ** 32, Math.floor(d.offset / 2 ** 32)]);
}

test('CPU draws: uniform and int bit-exact, normal within float32 rounding of log/cos', async () => {
  const b = new CpuBackend();
  for (const d of fixtures.draws) {
    const st = NDArray.fromData(b, stateOf(d), [4], 'int32');
    const n = d.uniform.length;
    const u = await NDArray.fromStorage(b.random(st.strided, [n], { dist: 'uniform' }), [n]).data();
    expect(Array.from(u)).toEqual(d.uniform);
    const r = d.randint;
    const ints = b.random(st.strided, [n], { dist: 'int', low: r.low, range: r.high - r.low });
    expect(Array.from(await NDArray.fromStorage(ints, [n]).data())).toEqual(r.values);
    // All 32 bits of word 0: int over the whole int32 range is word 0 − 2^31.
    const all = b.random(st.strided, [n], { dist: 'int', low: -(2 ** 31), range: 2 ** 32 });
    expect(Array.from(await NDArray.fromStorage(all, [n]).data())).toEqual(d.words.map((w) => w - 2 ** 31));
    const z = await NDArray.fromStorage(b.random(st.strided, [n], { dist: 'normal' }), [n]).data();
    z.forEach((v, i) =>
      expect(Math.abs(v - d.normal[i])).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(d.normal[i]))),
    );
  }
});

test('random refuses a bad state or range', () => {
  const b = new CpuBackend();
  const st = NDArray.fromData(b, [0, 0, 0, 0], [4], 'float32');
  expect(() => b.random(st.strided, [2], { dist: 'uniform' })).toThrow(/state has dtype float32; expected int32/);
  const s3 = NDArray.fromData(b, Int32Array.from([0, 0, 0]), [3], 'int32');
  expect(() => b.random(s3.strided, [2], { dist: 'uniform' })).toThrow(/state has shape \[3\]; expected \[4\]/);
  const s4 = NDArray.fromData(b, Int32Array.from([0, 0, 0, 0]), [4], 'int32');
  expect(() => b.random(s4.strided, [2], { dist: 'int', low: 0, range: 0 })).toThrow(/range 0/);
  expect(() => b.random(s4.strided, [2], { dist: 'beta' as 'int' })).toThrow(/unknown distribution "beta"/);
});

// randn's float32 ln and cos polynomials against float64 libm over the 24-bit grid they see
// (every 97th point): ln within 1 ulp, cos and sin within 2^-23 absolute.
test('the float32 ln, cos and sin of Box-Muller are accurate', () => {
  let worstLog = 0;
  let worstCos = 0;
  for (let k = 1; k <= 2 ** 24; k += 97) {
    const u = k * 2 ** -24;
    const want = Math.log(u);
    if (want !== 0)
      worstLog = Math.max(worstLog, Math.abs(logF32(u) - want) / 2 ** (Math.floor(Math.log2(-want)) - 23));
    const t = (k - 1) * 2 ** -24;
    worstCos = Math.max(
      worstCos,
      Math.abs(cosTurnF32(t) - Math.cos(2 * Math.PI * t)),
      Math.abs(sinTurnF32(t) - Math.sin(2 * Math.PI * t)),
    );
  }
  expect(logF32(1)).toBe(0);
  expect(worstLog).toBeLessThanOrEqual(1);
  expect(worstCos).toBeLessThanOrEqual(2 ** -23);
  for (const [t, v] of [
    [0, 0],
    [0.25, 1],
    [0.5, 0],
    [0.75, -1],
  ])
    expect(sinTurnF32(t)).toBeCloseTo(v, 7);
  for (const [t, c] of [
    [0, 1],
    [0.25, 0],
    [0.5, -1],
    [0.75, 0],
  ])
    expect(cosTurnF32(t)).toBeCloseTo(c, 7);
});
