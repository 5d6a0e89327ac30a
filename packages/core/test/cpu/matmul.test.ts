import { CpuBackend, NDArray } from '@surf/core';
import { MatmulImpl, matmulInto } from '../../src/cpu/matmul';
import { WasmGemm } from '../../src/cpu/wasm/gemm';
import { DEFAULT_GEMM, FMA_GEMM, buildGemmModule } from '../../src/cpu/wasm/gemm-kernel';
import { hasRelaxedSimd, hasWasmSimd } from '../../src/cpu/wasm/simd';
import { View } from '../../src/view';

// Deterministic pseudo-random values in [-1, 1).
function rand(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return out;
}

/** Naive float64 triple loop over the views; also returns Σ|a||b| per element for tolerances. */
function reference(a: Float32Array, av: View, b: Float32Array, bv: View): { c: Float64Array; mag: Float64Array } {
  const nd = av.ndim;
  const [m, k] = av.shape.slice(-2);
  const n = bv.shape[nd - 1];
  const batch = av.shape.slice(0, -2);
  const nb = batch.reduce((x, y) => x * y, 1);
  const c = new Float64Array(nb * m * n);
  const mag = new Float64Array(nb * m * n);
  for (let t = 0; t < nb; t++) {
    const idx: number[] = [];
    let r = t;
    for (let d = batch.length - 1; d >= 0; d--) {
      idx.unshift(r % batch[d]);
      r = Math.floor(r / batch[d]);
    }
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0,
          g = 0;
        let ao = av.offset,
          bo = bv.offset;
        idx.forEach((v, d) => {
          ao += v * av.strides[d];
          bo += v * bv.strides[d];
        });
        ao += i * av.strides[nd - 2];
        bo += j * bv.strides[nd - 1];
        for (let p = 0; p < k; p++) {
          const x = a[ao + p * av.strides[nd - 1]];
          const y = b[bo + p * bv.strides[nd - 2]];
          s += x * y;
          g += Math.abs(x * y);
        }
        c[(t * m + i) * n + j] = s;
        mag[(t * m + i) * n + j] = g;
      }
    }
  }
  return { c, mag };
}

function expectClose(got: Float32Array, ref: { c: Float64Array; mag: Float64Array }, what: string): void {
  expect(got.length).toBe(ref.c.length);
  for (let i = 0; i < got.length; i++) {
    const want = ref.c[i];
    if (!Number.isFinite(want)) {
      if (Number.isNaN(want) !== Number.isNaN(got[i]) || (!Number.isNaN(want) && got[i] !== want)) {
        throw new Error(`${what}: element ${i} is ${got[i]}, expected ${want}`);
      }
      continue;
    }
    // f32 accumulation: error grows with k·eps·Σ|a·b|; 2e-6 per unit of magnitude is ample.
    const tol = 1e-6 + 2e-6 * ref.mag[i] * Math.max(1, Math.sqrt(ref.mag.length));
    if (!(Math.abs(got[i] - want) <= tol))
      throw new Error(`${what}: element ${i} is ${got[i]}, expected ${want} (tolerance ${tol})`);
  }
}

const impls: MatmulImpl[] = hasWasmSimd() ? ['js', 'wasm'] : ['js'];

function run(a: Float32Array, av: View, b: Float32Array, bv: View, impl: MatmulImpl): Float32Array {
  const nd = av.ndim;
  const out = new Float32Array([...av.shape.slice(0, -1), bv.shape[nd - 1]].reduce((x, y) => x * y, 1)).fill(123);
  matmulInto(a, av, b, bv, out, impl);
  return out;
}

function check(
  m: number,
  k: number,
  n: number,
  opts: { transA?: boolean; transB?: boolean; seed?: number } = {},
): void {
  const seed = opts.seed ?? m * 1000003 + k * 1009 + n;
  const a = rand(m * k, seed);
  const b = rand(k * n, seed + 7);
  const av = opts.transA ? View.contiguous([k, m]).permute([1, 0]) : View.contiguous([m, k]);
  const bv = opts.transB ? View.contiguous([n, k]).permute([1, 0]) : View.contiguous([k, n]);
  const ref = reference(a, av, b, bv);
  for (const impl of impls) expectClose(run(a, av, b, bv, impl), ref, `${impl} ${m}x${k}x${n} ${JSON.stringify(opts)}`);
}

test('WebAssembly SIMD is detected in this Node', () => {
  // Node >= 16 has SIMD; if this fails the fast path silently falls back to JS.
  expect(hasWasmSimd()).toBe(true);
});

test('each generated module validates and stays under the 4 KB browsers compile synchronously', () => {
  for (const shape of [DEFAULT_GEMM, FMA_GEMM]) {
    for (let nv = 1; nv <= shape.nv; nv++) {
      const bytes = buildGemmModule(shape, nv);
      expect(bytes.length).toBeLessThan(4096);
      if (hasWasmSimd() && (!shape.fma || hasRelaxedSimd())) expect(WebAssembly.validate(bytes)).toBe(true);
    }
  }
});

test('relaxed SIMD is on in this Node (set by the backend where V8 keeps it behind a flag), and the default kernel uses it', () => {
  expect(hasRelaxedSimd()).toBe(true);
  expect(WasmGemm.create()!.shape).toEqual(FMA_GEMM);
});

test('odd shapes match a float64 triple loop', () => {
  const dims = [1, 3, 4, 7, 8, 10, 33, 65];
  for (const m of dims) for (const n of dims) for (const k of [1, 3, 7, 33]) check(m, k, n);
});

test('MLP shapes and larger sizes, k spanning several k blocks', () => {
  check(64, 784, 128);
  check(64, 128, 10);
  check(784, 64, 128, { transA: true });
  check(64, 10, 128, { transB: true });
  check(257, 600, 33);
  check(5, 1000, 17, { transA: true, transB: true });
});

test('transposed operands in every combination', () => {
  for (const [m, k, n] of [
    [7, 9, 5],
    [33, 65, 12],
    [1, 17, 3],
    [16, 1, 9],
  ]) {
    check(m, k, n, { transA: true });
    check(m, k, n, { transB: true });
    check(m, k, n, { transA: true, transB: true });
  }
});

test('general strides: offsets, steps, negative strides', () => {
  const base = rand(4000, 3);
  const base2 = rand(4000, 4);
  const views: [View, View][] = [
    [new View([9, 7], [21, 2], 5), new View([7, 6], [1, 11], 3)],
    [new View([5, 8], [8, 1], 0).flip([0, 1]), new View([8, 13], [20, 1], 40)],
    [new View([6, 4], [0, 1], 10), new View([4, 5], [5, 0], 2)], // broadcast rows / columns
  ];
  for (const [av, bv] of views) {
    const ref = reference(base, av, base2, bv);
    for (const impl of impls) expectClose(run(base, av, base2, bv, impl), ref, `${impl} ${av} ${bv}`);
  }
});

test('batched and broadcast batches', () => {
  const a = rand(2 * 3 * 5 * 9, 11);
  const b = rand(2 * 3 * 9 * 6, 12);
  const cases: [View, View][] = [
    [View.contiguous([2, 3, 5, 9]), View.contiguous([2, 3, 9, 6])],
    [View.contiguous([1, 5, 9]).expand([4, 5, 9]), View.contiguous([4, 9, 6])],
    [View.contiguous([4, 5, 9]), View.contiguous([9, 6]).expand([4, 9, 6])],
    [View.contiguous([3, 9, 5]).permute([0, 2, 1]), View.contiguous([3, 6, 9]).permute([0, 2, 1])],
    [View.contiguous([2, 1, 5, 9]).expand([2, 3, 5, 9]), View.contiguous([1, 3, 9, 6]).expand([2, 3, 9, 6])],
  ];
  for (const [av, bv] of cases) {
    const ref = reference(a, av, b, bv);
    for (const impl of impls) expectClose(run(a, av, b, bv, impl), ref, `${impl} ${av} ${bv}`);
  }
});

test('NaN and Inf propagate, including through zero operands', () => {
  const m = 6,
    k = 9,
    n = 10;
  const a = rand(m * k, 21);
  const b = rand(k * n, 22);
  a[1 * k + 4] = NaN; // row 1 of C is NaN
  a.fill(0, 3 * k, 4 * k); // row 3 of A is zero...
  b[2 * n + 7] = Infinity; // ...so 0·Inf makes column 7 of row 3 NaN, other rows ±Inf
  b[5 * n + 9] = NaN; // column 9 is NaN
  const av = View.contiguous([m, k]);
  const bv = View.contiguous([k, n]);
  const ref = reference(a, av, b, bv);
  expect(Number.isNaN(ref.c[3 * n + 7])).toBe(true);
  for (const impl of impls) expectClose(run(a, av, b, bv, impl), ref, impl);
});

test('k = 0 gives zeros; m = 0 or n = 0 gives an empty result', () => {
  for (const impl of impls) {
    const out = run(
      new Float32Array(0),
      View.contiguous([2, 3, 0]),
      new Float32Array(0),
      View.contiguous([2, 0, 4]),
      impl,
    );
    expect(Array.from(out)).toEqual(new Array(24).fill(0));
    expect(run(new Float32Array(0), View.contiguous([0, 5]), rand(20, 1), View.contiguous([5, 4]), impl).length).toBe(
      0,
    );
    expect(run(rand(15, 1), View.contiguous([3, 5]), new Float32Array(0), View.contiguous([5, 0]), impl).length).toBe(
      0,
    );
  }
});

test('every generated micro-kernel shape computes the same product', () => {
  if (!hasWasmSimd()) return;
  const m = 23,
    k = 41,
    n = 37;
  const a = rand(m * k, 31);
  const b = rand(k * n, 32);
  const av = View.contiguous([k, m]).permute([1, 0]);
  const bv = View.contiguous([k, n]);
  const ref = reference(a, av, b, bv);
  for (const fma of hasRelaxedSimd() ? [false, true] : [false]) {
    for (const mr of [1, 2, 3, 5, 6]) {
      for (const nv of [1, 2, 3, 4]) {
        for (const [unroll, direct] of [
          [1, true],
          [4, false],
        ] as const) {
          const g = WasmGemm.create({ mr, nv, unroll, fma }, 16, direct)!;
          const out = new Float32Array(m * n);
          g.gemm({ data: a, off: 0, rs: 1, cs: m }, { data: b, off: 0, rs: n, cs: 1 }, m, n, k, out, 0);
          expectClose(out, ref, `mr=${mr} nv=${nv} unroll=${unroll} fma=${fma} directB=${direct}`);
        }
      }
    }
  }
});

test('memory is reused and grown across calls of different sizes', () => {
  for (const s of [5, 130, 7, 90, 3]) check(s, s + 1, s + 2);
});

test('a product too big for wasm32 memory is reported, so matmul can fall back to JS', () => {
  if (!hasWasmSimd()) return;
  const g = WasmGemm.create()!;
  expect(g.fits(40000, 40000, 40000)).toBe(false);
  expect(g.fits(64, 128, 784)).toBe(true);
});

test('CpuBackend matmul uses the same kernels through NDArray', async () => {
  const be = new CpuBackend();
  const a = rand(3 * 20 * 30, 41);
  const b = rand(30 * 12, 42);
  const x = NDArray.fromData(be, a, [3, 20, 30]);
  const w = NDArray.fromData(be, b, [12, 30]).permute([1, 0]);
  const got = (await x.matmul(w).data()) as Float32Array;
  const ref = reference(
    a,
    View.contiguous([3, 20, 30]),
    b,
    View.contiguous([12, 30]).permute([1, 0]).expand([3, 30, 12]),
  );
  expectClose(got, ref, 'NDArray');
});
