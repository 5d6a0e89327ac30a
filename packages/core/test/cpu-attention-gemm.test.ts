import { CpuBackend, View } from '@surf/core';

// Fused attention on the CPU runs on the SIMD GEMM per batch index, reusing its score and
// probability blocks from one batch index to the next. Checked against attention written
// out in float64 loops here, with a mask that hides a whole row in one batch index only.
const [B, L, S, E, Ev] = [3, 5, 7, 4, 6];
const rnd = (n: number, seed: number) => {
  let s = seed;
  return Float32Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 4 - 2);
};
const q = rnd(B * L * E, 1),
  k = rnd(B * S * E, 2),
  v = rnd(B * S * Ev, 3);
// Bool mask [B, L, S]: key j visible to query i when (i + j + b) % 3 != 0, except row 2 of
// batch 1, which sees nothing (and is visible in batches 0 and 2).
const mask = new Uint8Array(B * L * S);
for (let b = 0; b < B; b++)
  for (let i = 0; i < L; i++)
    for (let j = 0; j < S; j++) mask[(b * L + i) * S + j] = b === 1 && i === 2 ? 0 : (i + j + b) % 3 !== 0 ? 1 : 0;

function reference(b: number, i: number): { out: number[]; lse: number } {
  const scale = 1 / Math.sqrt(E);
  const s: number[] = [];
  for (let j = 0; j < S; j++) {
    if (!mask[(b * L + i) * S + j]) continue;
    let acc = 0;
    for (let e = 0; e < E; e++) acc += q[(b * L + i) * E + e] * k[(b * S + j) * E + e];
    s.push(acc * scale);
  }
  if (s.length === 0) return { out: new Array(Ev).fill(0), lse: -Infinity };
  const m = Math.max(...s);
  const w = s.map((x) => Math.exp(x - m));
  const l = w.reduce((a, c) => a + c, 0);
  const out = new Array(Ev).fill(0);
  let t = 0;
  for (let j = 0; j < S; j++) {
    if (!mask[(b * L + i) * S + j]) continue;
    for (let e = 0; e < Ev; e++) out[e] += (w[t] / l) * v[(b * S + j) * Ev + e];
    t++;
  }
  return { out, lse: m + Math.log(l) };
}

test('fused attention with a row hidden in one batch index only matches float64 loops', async () => {
  const be = new CpuBackend();
  const st = (data: Float32Array | Uint8Array, shape: number[], dtype: 'float32' | 'bool' = 'float32') => ({
    storage: be.fromData(data, dtype),
    view: View.contiguous(shape),
  });
  const res = be.attention(st(q, [B, L, E]), st(k, [B, S, E]), st(v, [B, S, Ev]), {
    scale: 1 / Math.sqrt(E),
    causal: false,
    mask: st(mask, [B, L, S], 'bool'),
  });
  const out = (await be.read(res.out)) as Float32Array;
  const lse = (await be.read(res.lse)) as Float32Array;
  for (let b = 0; b < B; b++)
    for (let i = 0; i < L; i++) {
      const want = reference(b, i);
      expect(lse[b * L + i]).toBeCloseTo(want.lse, 5);
      for (let e = 0; e < Ev; e++) {
        const got = out[(b * L + i) * Ev + e];
        if (!(Math.abs(got - want.out[e]) <= 1e-5)) throw new Error(`[${b}, ${i}, ${e}]: ${got} vs ${want.out[e]}`);
      }
    }
  expect(lse[1 * L + 2]).toBe(-Infinity);
  expect(Array.from(out.subarray((1 * L + 2) * Ev, (1 * L + 3) * Ev))).toEqual(new Array(Ev).fill(0));
});
