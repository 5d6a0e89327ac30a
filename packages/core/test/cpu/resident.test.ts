import { CpuBackend, E, NDArray } from '@surf/core';
import { Arena, sharedArena } from '../../src/cpu/wasm/arena';
import { RESIDENT_MIN } from '../../src/cpu/pool';
import { rand } from '../lcg';

// CPU storages of float32 arrays from RESIDENT_MIN elements live in the kernels' shared
// linear memory, so the WebAssembly kernels read and write them in place. Results must be the
// same as for arrays copied in, whatever the layout, and blocks must come back on dispose.

test('the arena recycles blocks by size, reuses one up to twice as big, and lowers its top', () => {
  const a = new Arena(true);
  const top0 = a.scratch;
  const x = a.alloc(1000),
    y = a.alloc(5000),
    z = a.alloc(64);
  expect(x % 64).toBe(0);
  expect(y).toBeGreaterThanOrEqual(x + 1000);
  expect(a.scratch).toBeGreaterThanOrEqual(z + 64);
  a.release(y);
  expect(a.alloc(5000)).toBe(y); // same size: the same block
  a.release(y);
  expect(a.alloc(3000)).toBe(y); // at most twice as big: reused
  a.release(y);
  const w = a.alloc(2000); // 5056-byte block is more than twice 2000: a new one
  expect(w).not.toBe(y);
  a.release(w); // the topmost block lowers the top
  expect(a.scratch).toBe(w);
  a.release(x);
  a.release(z);
  expect(a.allocatedBytes).toBe(0);
  expect(a.scratch).toBeGreaterThanOrEqual(top0);
  expect(() => a.release(12345)).toThrow(/no block/);
});

test('views stay valid and are recognised after the memory grows', () => {
  const a = new Arena(true);
  const at = a.alloc(4 * 100);
  const v = a.f32At(at, 100);
  v.set(rand(100, 1));
  const big = a.alloc(8 << 20); // grows the memory
  expect(a.addressOf(v)).toBe(at);
  expect(a.addressOf(a.f32At(big, 10))).toBe(big);
  expect(Array.from(v.subarray(0, 3))).toEqual(Array.from(rand(100, 1).subarray(0, 3)));
  expect(a.addressOf(new Float32Array(100))).toBe(-1);
  expect(a.addressOf(new Float32Array(new SharedArrayBuffer(400)))).toBe(-1);
});

const shared = sharedArena().shared;
const run = shared ? test : test.skip;

run('big float32 storages are resident, small and integer ones are not; destroy gives blocks back', () => {
  const arena = sharedArena();
  const before = arena.allocatedBytes;
  const be = new CpuBackend();
  const big = NDArray.fromData(be, rand(RESIDENT_MIN, 2), [RESIDENT_MIN]);
  const small = NDArray.fromData(be, rand(RESIDENT_MIN - 1, 3), [RESIDENT_MIN - 1]);
  const ints = NDArray.fromData(be, new Int32Array(4096), [4096]);
  const data = (x: NDArray) => (x.storage as unknown as { data: Float32Array }).data;
  expect(arena.addressOf(data(big))).toBeGreaterThan(0);
  expect(arena.addressOf(data(small))).toBe(-1);
  expect(arena.addressOf(data(ints))).toBe(-1);
  // Reads are copies the caller owns (not views of shared memory that a later op reuses).
  const read = be.readSync(big.storage);
  expect(read.buffer instanceof SharedArrayBuffer).toBe(false);
  expect(Array.from(read)).toEqual(Array.from(rand(RESIDENT_MIN, 2)));
  const sum = big.map(E.add(E.in(0), E.f(1)));
  expect(arena.allocatedBytes).toBeGreaterThan(before);
  be.destroy();
  expect(arena.allocatedBytes).toBe(before);
  void sum;
});

run('matmul and elementwise on resident operands match the same work on JS arrays, every layout', async () => {
  const be = new CpuBackend();
  // Matmuls: shapes with n % 4 != 0 (copy-out path), transposed views read in place (A with
  // column strides, B packed from in place), offsets into a bigger storage, a batch.
  const cases: [number, number, number][] = [
    [64, 100, 128],
    [37, 50, 43],
    [130, 70, 12],
    [8, 300, 120],
  ];
  for (const [m, k, n] of cases) {
    const a = rand(m * k, m),
      b = rand(k * n, n);
    // A transposed: stored as [k, m]; B transposed: stored as [n, k]; both resident (≥ 1024).
    const aT = new Float32Array(m * k),
      bT = new Float32Array(k * n);
    for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) aT[p * m + i] = a[i * k + p];
    for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) bT[j * k + p] = b[p * n + j];
    const A = NDArray.fromData(be, a, [m, k]),
      B = NDArray.fromData(be, b, [k, n]);
    const At = NDArray.fromData(be, aT, [k, m]).permute([1, 0]),
      Bt = NDArray.fromData(be, bT, [n, k]).permute([1, 0]);
    const ref = new Float64Array(m * n);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
        ref[i * n + j] = s;
      }
    for (const [x, y, what] of [
      [A, B, 'plain'],
      [At, B, 'A^T'],
      [A, Bt, 'B^T'],
      [At, Bt, 'both'],
    ] as const) {
      const got = (await x.matmul(y).data()) as Float32Array;
      for (let i = 0; i < m * n; i++)
        if (!(Math.abs(got[i] - ref[i]) <= 1e-4 * k))
          throw new Error(`${what} ${m}x${k}x${n} [${i}]: ${got[i]} vs ${ref[i]}`);
    }
    // With a fused epilogue (bias + ReLU) written in place over the product.
    const bias = NDArray.fromData(be, rand(n, 7), [n]);
    const fused = (await A.matmul(B, {
      expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)),
      inputs: [bias.expand([m, n])],
    }).data()) as Float32Array;
    const bv = rand(n, 7);
    for (let i = 0; i < m * n; i++)
      if (!(Math.abs(fused[i] - Math.max(ref[i] + bv[i % n], 0)) <= 1e-4 * k))
        throw new Error(`epilogue ${m}x${k}x${n} [${i}]`);
  }
  // Elementwise: rows of 1030 (not a multiple of 4: inputs over-read, output copied), a row
  // broadcast, one value per row, a crop (row stride > row length); all inputs resident.
  const rows = 6,
    inner = 1030;
  const xv = rand(rows * inner, 11),
    wide = rand(rows * (inner + 6), 12),
    rv = rand(inner, 13),
    cv = rand(rows * 200, 14);
  const X = NDArray.fromData(be, xv, [rows, inner]);
  const W = NDArray.fromData(be, wide, [rows, inner + 6]).crop([
    [0, rows],
    [3, inner + 3],
  ]);
  const R = NDArray.fromData(be, rv, [1, inner]).expand([rows, inner]);
  const C = NDArray.fromData(be, cv, [rows, 200])
    .crop([
      [0, rows],
      [5, 6],
    ])
    .expand([rows, inner]);
  // One value per row from a contiguous column (read in place): rows 5.. of a long vector.
  const dv = rand(2048, 15);
  const D = NDArray.fromData(be, dv, [2048])
    .crop([[5, 5 + rows]])
    .reshape([rows, 1])
    .expand([rows, inner]);
  const got = (await NDArray.elementwise(
    [E.mul(E.add(E.mul(E.in(0), E.in(1)), E.sub(E.in(2), E.in(3))), E.in(4))],
    [X, W, R, C, D],
  )[0].data()) as Float32Array;
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < inner; j++) {
      const want = Math.fround(
        Math.fround(
          Math.fround(xv[r * inner + j] * wide[r * (inner + 6) + 3 + j]) + Math.fround(rv[j] - cv[r * 200 + 5]),
        ) * dv[5 + r],
      );
      if (got[r * inner + j] !== want) throw new Error(`elementwise [${r}, ${j}]: ${got[r * inner + j]} vs ${want}`);
    }
  }
  be.destroy();
});
