import { CpuBackend, E, Expr, NDArray } from '@surf/core';
import { WasmElementwise } from '../../../src/cpu/wasm/elementwise';
import { f32Values } from '../../f32-values';

// The 2-d WebAssembly SIMD elementwise loop (rows × inner: contiguous rows, a row broadcast
// down the rows, one value per row, a scalar) and the matmul epilogue that runs it in place
// on the product in wasm memory. Results must equal IEEE f32 evaluation bit for bit.
const f = Math.fround;
const same = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b);

const values = (n: number, seed: number) => f32Values(n, seed, 89);

// [rows, inner] operand shapes: full, a row broadcast (bias), a column (one per row), a scalar.
type Layout = 'full' | 'row' | 'col' | 'scalar';
function operand(
  be: CpuBackend,
  layout: Layout,
  rows: number,
  inner: number,
  seed: number,
): { arr: NDArray; at: (r: number, j: number) => number } {
  const shape = layout === 'full' ? [rows, inner] : layout === 'row' ? [inner] : layout === 'col' ? [rows, 1] : [];
  const n = shape.reduce((a, b) => a * b, 1);
  const v = values(n, seed);
  const arr = NDArray.fromData(be, v, shape);
  const at = (r: number, j: number) =>
    layout === 'full' ? v[r * inner + j] : layout === 'row' ? v[j] : layout === 'col' ? v[r] : v[0];
  return { arr, at };
}

/** Records what WasmElementwise's `run` (or `runInPlace`) returned: true when the SIMD loop ran. */
function spyWasm(method: 'run' | 'runInPlace' = 'run'): { ran: () => boolean[]; restore: () => void } {
  const results: boolean[] = [];
  const proto = WasmElementwise.prototype as unknown as Record<string, (...a: unknown[]) => boolean>;
  const orig = proto[method];
  proto[method] = function (this: unknown, ...a: unknown[]) {
    const r = orig.apply(this, a);
    results.push(r);
    return r;
  };
  return {
    ran: () => results,
    restore: () => {
      proto[method] = orig;
    },
  };
}

const x = E.in(0),
  y = E.in(1),
  z = E.in(2);
const exprs: [string, Expr, (a: number, b: number, c: number) => number][] = [
  [
    'bias add + relu',
    E.max(E.add(x, y), E.f(0)),
    (a, b) => {
      const s = f(a + b);
      return Number.isNaN(s) ? NaN : Math.max(s, 0);
    },
  ],
  ['relu backward', E.where(E.lt(E.f(0), x), y, E.f(0)), (a, b) => (0 < a ? b : 0)],
  ['three inputs', E.sub(E.mul(x, y), E.div(z, E.f(3))), (a, b, c) => f(f(a * b) - f(c / f(3)))],
];

test.each([
  [64, 128],
  [70, 90],
  [1000, 10],
  [100, 41],
] as const)(
  '2-d SIMD elementwise over [%i, %i] with broadcast rows, columns and scalars matches f32 evaluation',
  async (rows, inner) => {
    const be = new CpuBackend();
    const spy = spyWasm();
    try {
      const layouts: Layout[][] = [
        ['full', 'row', 'full'],
        ['full', 'col', 'scalar'],
        ['row', 'full', 'col'],
        ['col', 'row', 'full'],
      ];
      for (const [name, e, ref] of exprs) {
        for (const ls of layouts) {
          const ops = ls.map((l, i) => operand(be, l, rows, inner, 7 + i));
          const [got] = NDArray.elementwise(
            [e],
            ops.map((o) => o.arr),
          );
          expect(got.shape).toEqual([rows, inner]);
          const g = (await got.data()) as Float32Array;
          for (let r = 0; r < rows; r++) {
            for (let j = 0; j < inner; j++) {
              const want = f(ref(ops[0].at(r, j), ops[1].at(r, j), ops[2].at(r, j)));
              if (!same(g[r * inner + j], want))
                throw new Error(`${name} ${ls.join(',')} at (${r}, ${j}): got ${g[r * inner + j]}, want ${want}`);
            }
          }
        }
      }
      // Every one of these ran on the SIMD loop.
      expect(spy.ran().length).toBeGreaterThan(0);
      expect(spy.ran().every((r) => r)).toBe(true);
    } finally {
      spy.restore();
    }
  },
);

test('2-d SIMD elementwise reads rows of a wider array (a crop) and a transposed column', async () => {
  const be = new CpuBackend();
  const wide = NDArray.fromData(be, values(80 * 133, 3), [80, 133]);
  const a = wide.crop([
    [0, 80],
    [5, 125],
  ]); // rows 133 apart, 120 wide
  const colSrc = NDArray.fromData(be, values(80 * 3, 4), [3, 80]);
  const col = colSrc
    .crop([
      [1, 2],
      [0, 80],
    ])
    .permute([1, 0]); // [80, 1], rows 1 apart
  const spy = spyWasm();
  try {
    const got = (await a.map(E.add(E.mul(E.in(0), E.f(2)), E.in(1)), col).data()) as Float32Array;
    expect(spy.ran()).toEqual([true]);
    const av = (await a.data()) as Float32Array;
    const cv = (await col.data()) as Float32Array;
    for (let r = 0; r < 80; r++)
      for (let j = 0; j < 120; j++) expect(same(got[r * 120 + j], f(f(av[r * 120 + j] * 2) + cv[r]))).toBe(true);
  } finally {
    spy.restore();
  }
});

test('3-d work (a per-channel operand over [N, C, H, W], as batch norm) runs as 2-d SIMD slices, bit for bit', async () => {
  const be = new CpuBackend();
  const [n, c, hw] = [4, 8, 130]; // H·W = 130: rows not a multiple of 4 (padded or over-read)
  const xv = values(n * c * hw, 5),
    mv = values(c, 6),
    gv = values(c, 7);
  const x = NDArray.fromData(be, xv, [n, c, 10, 13]);
  const m = NDArray.fromData(be, mv, [1, c, 1, 1]).expand([n, c, 10, 13]);
  const g = NDArray.fromData(be, gv, [1, c, 1, 1]).expand([n, c, 10, 13]);
  const spy = spyWasm();
  try {
    const got = (await x.map(E.mul(E.sub(E.in(0), E.in(1)), E.in(2)), m, g).data()) as Float32Array;
    expect(spy.ran()).toEqual([true, true, true, true]); // one slice per sample
    for (let b = 0; b < n; b++)
      for (let ch = 0; ch < c; ch++)
        for (let j = 0; j < hw; j++) {
          const i = (b * c + ch) * hw + j;
          if (!same(got[i], f(f(xv[i] - mv[ch]) * gv[ch])))
            throw new Error(`[${b}, ${ch}, ${j}]: ${got[i]} vs ${f(f(xv[i] - mv[ch]) * gv[ch])}`);
        }
    // An expression without a SIMD form (sin) goes to the JS kernel whole.
    const e = (await x.map(E.sin(E.sub(E.in(0), E.in(1))), m).data()) as Float32Array;
    for (let i = 0; i < n * c * hw; i += 37)
      expect(same(e[i], f(Math.sin(f(xv[i] - mv[Math.floor(i / hw) % c]))))).toBe(true);
  } finally {
    spy.restore();
  }
});

test('fused matmul epilogues equal the product followed by the same elementwise op, bit for bit', async () => {
  const be = new CpuBackend();
  const shapes: [number, number, number][] = [
    [64, 784, 128],
    [64, 128, 10],
    [37, 50, 9],
    [1, 20, 30],
    [30, 20, 1],
    [5, 3, 6],
  ];
  for (const [m, k, n] of shapes) {
    const a = NDArray.fromData(be, values(m * k, 11), [m, k]);
    const bT = NDArray.fromData(be, values(n * k, 12), [n, k]).permute([1, 0]); // a PyTorch-layout weight
    const cases: [string, Expr, NDArray[]][] = [
      ['bias', E.add(E.in(0), E.in(1)), [NDArray.fromData(be, values(n, 13), [n])]],
      ['bias relu', E.max(E.add(E.in(0), E.in(1)), E.f(0)), [NDArray.fromData(be, values(n, 14), [n])]],
      [
        'full and column',
        E.mul(E.sub(E.in(0), E.in(1)), E.in(2)),
        [NDArray.fromData(be, values(m * n, 15), [m, n]), NDArray.fromData(be, values(m, 16), [m, 1])],
      ],
      ['scalar', E.mul(E.in(0), E.in(1)), [NDArray.fromData(be, [0.5], [])]],
      ['sin (no SIMD form: applied after)', E.sin(E.in(0)), []],
    ];
    const prod = (await a.matmul(bT).data()) as Float32Array;
    for (const [name, e, inputs] of cases) {
      const spy = spyWasm('runInPlace');
      const fused = (await a.matmul(bT, { expr: e, inputs }).data()) as Float32Array;
      spy.restore();
      // Fused in wasm memory unless the expression has no SIMD form.
      expect(spy.ran()).toEqual([name.startsWith('sin') ? false : true]);
      const want = (await NDArray.fromData(be, prod, [m, n])
        .map(e, ...inputs)
        .data()) as Float32Array;
      for (let i = 0; i < m * n; i++)
        if (!same(fused[i], want[i]))
          throw new Error(`${m}x${k}x${n} ${name} at ${i}: got ${fused[i]}, want ${want[i]}`);
    }
  }
});

test('a matmul epilogue checks its inputs', () => {
  const be = new CpuBackend();
  const a = NDArray.fromData(be, values(6, 1), [2, 3]);
  const b = NDArray.fromData(be, values(6, 2), [3, 2]);
  const bad = NDArray.fromData(be, [1, 2, 3], [3]);
  expect(() => be.matmul(a.strided, b.strided, { expr: E.add(E.in(0), E.in(1)), inputs: [bad.strided] })).toThrow();
  expect(() => be.matmul(a.strided, b.strided, { expr: E.lt(E.in(0), E.f(0)), inputs: [] })).toThrow(/float32/);
});
