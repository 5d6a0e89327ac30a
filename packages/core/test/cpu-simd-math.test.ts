import { CpuBackend, E, Expr, NDArray } from '@surf/core';
import { buildElementwiseModule, supportedByWasm } from '../src/cpu/wasm/elementwise-kernel';
import { WasmElementwise } from '../src/cpu/wasm/elementwise';

// exp, log, tanh and erf run on vectorised polynomials in the generated wasm SIMD loops. Each is
// held to a few ulp of the float64 result over the whole float32 range: every exponent, the
// specials, subnormals, and the edges where results overflow or become subnormal.

/**
 * erf in float64 to ~1e-16: the Maclaurin series below 2.5, the continued fraction of erfc above
 * (written here, not shared with the op table's reference).
 */
function erf64(x: number): number {
  const a = Math.abs(x);
  if (Number.isNaN(x)) return NaN;
  let r: number;
  if (a < 2.5) {
    let term = a,
      sum = a;
    for (let n = 1; n < 200; n++) {
      term *= (-a * a) / n;
      sum += term / (2 * n + 1);
      if (Math.abs(term) < 1e-18 * Math.abs(sum)) break;
    }
    r = (2 / Math.sqrt(Math.PI)) * sum;
  } else if (a === Infinity) r = 1;
  else {
    // erfc(a) = e^{-a²}/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + …)))), evaluated bottom-up.
    let f = a;
    for (let k = 120; k >= 1; k--) f = a + k / 2 / f;
    r = 1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  }
  return x < 0 || Object.is(x, -0) ? -r : r;
}

/** The spacing of float32 values at |y| (subnormal spacing below the smallest normal). */
function ulp(y: number): number {
  const a = Math.abs(y);
  if (a < 2 ** -126) return 2 ** -149;
  if (a >= 2 ** 128) return 2 ** 104;
  return 2 ** (Math.floor(Math.log2(a)) - 23);
}

/** Float32 inputs: random bit patterns (every exponent), dense ranges, edges and specials. */
function inputs(lo: number, hi: number, edges: readonly number[]): Float32Array {
  const out: number[] = [NaN, Infinity, -Infinity, 0, -0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, 3.4e38, -3.4e38];
  const bits = new Uint32Array(1);
  const asF = new Float32Array(bits.buffer);
  let s = 12345;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < 20000; i++) {
    bits[0] = next() ^ (next() << 16);
    out.push(asF[0]);
  }
  for (let i = 0; i < 20000; i++) out.push(lo + ((hi - lo) * i) / 20000);
  for (const e of edges) for (let k = -40; k <= 40; k++) out.push(e + k * Math.abs(e || 1) * 2 ** -22);
  return Float32Array.from(out);
}

/** Runs `outs` over `xs` through the generated module on its own memory: the SIMD path itself. */
function runSimdAll(outs: Expr[], xs: Float32Array, consts: number[] = []): Float32Array[] {
  const n = (xs.length + 3) & ~3;
  const bytes = 64 + 4 * n * (outs.length + 1) + 64;
  const mem = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65536), maximum: 1024, shared: true });
  const inst = new WebAssembly.Instance(new WebAssembly.Module(buildElementwiseModule(outs, ['u'])), {
    env: { memory: mem },
  });
  const f = new Float32Array(mem.buffer);
  f.set(xs, 16);
  const outAt = outs.map((_, k) => 64 + 4 * n * (k + 1));
  f.set(consts, 0); // the constants' values, in the expressions' pre-order, at byte 0
  (inst.exports.run as (...a: number[]) => void)(1, 4 * n, 64, 0, ...outAt.flatMap((at) => [at, 0]), 0);
  return outAt.map((at) => f.slice(at / 4, at / 4 + xs.length));
}
const runSimd = (e: Expr, xs: Float32Array) => runSimdAll([e], xs)[0];

/** The largest error of `got` against float64 `want`, in float32 ulps of the exact value. */
function worstUlp(got: Float32Array, want: (i: number) => number): number {
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want(i)) / ulp(want(i)));
  return worst;
}

const cases: [string, Expr, (x: number) => number, Float32Array, number][] = [
  ['exp', E.exp(E.in(0)), Math.exp, inputs(-110, 95, [88.72284, -87.33655, -103.27893, -103.97208, 0]), 2],
  ['log', E.log(E.in(0)), Math.log, inputs(0, 4, [1, 0.70710677, 1.4142135, 2 ** -126, 2 ** -149]), 2],
  ['tanh', E.tanh(E.in(0)), Math.tanh, inputs(-10, 10, [0.625, -0.625, 9, 1e-4]), 2],
  ['erf', E.erf(E.in(0)), erf64, inputs(-5, 5, [1.5, -1.5, 3.9, 4, 1e-4]), 4],
];

describe.each(cases)('%s on wasm SIMD', (name, e, ref, xs, maxUlp) => {
  test(`is accepted by the SIMD path and within ${maxUlp} ulp of float64, specials exact`, () => {
    expect(supportedByWasm(e, ['float32'])).toBe(true);
    const got = runSimd(e, xs);
    let worst = 0,
      at = 0;
    for (let i = 0; i < xs.length; i++) {
      const want = ref(xs[i]);
      const g = got[i];
      if (Number.isNaN(want) || !Number.isFinite(Math.fround(want)) || Math.fround(want) === 0) {
        // NaN, ±Inf and results that round to ±0 must be those exactly (sign of zero included).
        if (!Object.is(g, Math.fround(want)) && !(Number.isNaN(want) && Number.isNaN(g)))
          throw new Error(`${name}(${xs[i]}) = ${g}, want ${Math.fround(want)}`);
        continue;
      }
      const err = Math.abs(g - want) / ulp(want);
      if (!(err <= worst)) {
        worst = err;
        at = i;
      }
    }
    if (!(worst <= maxUlp))
      throw new Error(`${name}: ${worst} ulp at x = ${xs[at]} (got ${got[at]}, want ${ref(xs[at])})`);
  });
});

test('two outputs with different transcendentals, and one met twice (sigmoid), stay apart and correct', () => {
  const xs = new Float32Array(4099).map((_, i) => (i - 2049) / 100);
  const x = E.in(0);
  const e = E.exp(E.neg(E.abs(x)));
  // Autograd's stable sigmoid: e^-|x| appears twice and is computed once.
  const sigmoid = E.div(E.where(E.lt(x, E.f(0)), e, E.f(1)), E.add(E.f(1), e));
  // Constants in pre-order: sigmoid's 0 (the lt), 1 (the where), 1 (the add).
  const [ex, enx, sg, th] = runSimdAll([E.exp(x), E.exp(E.neg(x)), sigmoid, E.tanh(E.exp(E.neg(x)))], xs, [0, 1, 1]);
  expect(worstUlp(ex, (i) => Math.exp(xs[i]))).toBeLessThanOrEqual(2);
  expect(worstUlp(enx, (i) => Math.exp(-xs[i]))).toBeLessThanOrEqual(2);
  expect(worstUlp(sg, (i) => 1 / (1 + Math.exp(-xs[i])))).toBeLessThanOrEqual(4);
  // tanh of an exp: a nested transcendental, its input rounded first.
  expect(worstUlp(th, (i) => Math.tanh(Math.fround(Math.exp(-xs[i]))))).toBeLessThanOrEqual(3);
});

test('NDArray.map takes the SIMD path for a large float32 exp, the JS kernel for a small one', async () => {
  const be = new CpuBackend();
  const big = new Float32Array(8192).map((_, i) => (i - 4096) / 50);
  const proto = WasmElementwise.prototype as unknown as Record<string, (...a: unknown[]) => boolean>;
  const run = proto.run;
  const ran: boolean[] = [];
  proto.run = function (this: unknown, ...a: unknown[]) {
    ran.push(run.apply(this, a));
    return ran[ran.length - 1];
  };
  let got: Float32Array;
  try {
    got = (await NDArray.fromData(be, big, [8192])
      .map(E.exp(E.in(0)))
      .data()) as Float32Array;
  } finally {
    proto.run = run;
  }
  expect(ran).toEqual([true]);
  expect(worstUlp(got, (i) => Math.exp(big[i]))).toBeLessThanOrEqual(2);
  // The JS kernel rounds Math.exp once: exactly its fround.
  const small = big.subarray(0, 100);
  const js = (await NDArray.fromData(be, small, [100])
    .map(E.exp(E.in(0)))
    .data()) as Float32Array;
  for (let i = 0; i < 100; i++) expect(js[i]).toBe(Math.fround(Math.exp(small[i])));
});
