import { CpuBackend, E, NDArray } from '@surf/core';
import { collapseDims } from '../../src/cpu/collapse';
import { View } from '../../src/view';

// The CPU elementwise kernel specializes on layout (merged dims; unit, zero or other stride
// along the last dim). Every layout must give what a per-element walk of the views gives.

test('collapseDims merges dims every operand walks alike and drops size-1 dims', () => {
  expect(
    collapseDims(
      [2, 3, 4],
      [
        [12, 4, 1],
        [0, 0, 0],
      ],
    ),
  ).toEqual({ shape: [24], strides: [[1], [0]] });
  expect(
    collapseDims(
      [2, 3, 4],
      [
        [12, 4, 1],
        [0, 0, 1],
      ],
    ),
  ).toEqual({
    shape: [6, 4],
    strides: [
      [4, 1],
      [0, 1],
    ],
  });
  expect(collapseDims([2, 1, 3], [[3, 99, 1]])).toEqual({ shape: [6], strides: [[1]] });
  expect(collapseDims([3, 2], [[1, 3]])).toEqual({ shape: [3, 2], strides: [[1, 3]] });
  expect(collapseDims([1, 1], [[5, 7]])).toEqual({ shape: [1], strides: [[0]] });
  expect(collapseDims([4, 5], [[-5, -1]])).toEqual({ shape: [20], strides: [[-1]] });
});

function rand(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[i] = s / 1073741824 - 1;
  }
  return out;
}

/** Reads every element of `x` in row-major order through its view (masked reads give 0). */
async function walk(x: NDArray): Promise<number[]> {
  const raw = (await x.backend.read(x.storage)) as Float32Array;
  const out: number[] = [];
  const idx = new Array(x.ndim).fill(0);
  for (let i = 0; i < x.size; i++) {
    const at = x.view.indexOf(idx);
    out.push(at < 0 ? 0 : raw[at]);
    for (let d = x.ndim - 1; d >= 0; d--) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

test('elementwise over many layouts matches a per-element walk', async () => {
  const be = new CpuBackend();
  const base = NDArray.fromData(be, rand(2 * 3 * 4, 1), [2, 3, 4]);
  const row = NDArray.fromData(be, rand(4, 2), [4]);
  const col = NDArray.fromData(be, rand(3, 3), [3, 1]);
  const scalar = NDArray.fromData(be, rand(1, 4), []);
  const layouts: [string, NDArray][] = [
    ['contiguous', base],
    ['permuted', NDArray.fromData(be, rand(24, 5), [4, 3, 2]).permute([2, 1, 0])],
    ['flipped', base.flip([1, 2])],
    [
      'cropped',
      NDArray.fromData(be, rand(3 * 5 * 6, 6), [3, 5, 6]).crop([
        [1, 3],
        [1, 4],
        [2, 6],
      ]),
    ],
    [
      'padded',
      NDArray.fromData(be, rand(2 * 2 * 3, 7), [2, 2, 3]).pad([
        [0, 0],
        [1, 0],
        [0, 1],
      ]),
    ],
    ['broadcast', NDArray.fromData(be, rand(3, 8), [1, 3, 1]).expand([2, 3, 4])],
  ];
  const expr = [
    E.add(E.mul(E.in(0), E.f(2)), E.in(1)),
    E.max(E.sub(E.in(0), E.in(2)), E.f(0.25)),
    E.mul(E.in(3), E.in(0)),
  ];
  for (const [name, x] of layouts) {
    const [o0, o1, o2] = NDArray.elementwise(expr, [x, row, col, scalar]);
    const xs = await walk(x);
    const r = await walk(row.expand([2, 3, 4]));
    const c = await walk(col.expand([2, 3, 4]));
    const s = (await scalar.data())[0];
    const f = Math.fround;
    const want0 = xs.map((v, i) => f(f(v * 2) + r[i]));
    const want1 = xs.map((v, i) => Math.max(f(v - c[i]), f(0.25)));
    const want2 = xs.map((v) => f(s * v));
    expect({ name, got: Array.from(await o0.data()) }).toEqual({ name, got: want0 });
    expect({ name, got: Array.from(await o1.data()) }).toEqual({ name, got: want1 });
    expect({ name, got: Array.from(await o2.data()) }).toEqual({ name, got: want2 });
  }
});

test('one kernel per layout: a contiguous and a broadcast input of one expression both run right', async () => {
  const be = new CpuBackend();
  const a = NDArray.fromData(be, [1, 2, 3, 4, 5, 6], [2, 3]);
  const b = NDArray.fromData(be, [10, 20, 30, 40, 50, 60], [2, 3]);
  const bRow = NDArray.fromData(be, [10, 20, 30], [3]);
  const bCol = NDArray.fromData(be, [10, 20], [2, 1]);
  const e = E.sub(E.in(0), E.in(1));
  expect(Array.from(await a.map(e, b).data())).toEqual([-9, -18, -27, -36, -45, -54]);
  expect(Array.from(await a.map(e, bRow).data())).toEqual([-9, -18, -27, -6, -15, -24]);
  expect(Array.from(await a.map(e, bCol).data())).toEqual([-9, -8, -7, -16, -15, -14]);
  expect(
    Array.from(
      await a
        .permute([1, 0])
        .map(e, bCol.reshape([1, 2]))
        .data(),
    ),
  ).toEqual([-9, -16, -8, -15, -7, -14]);
});

test('contiguous copies of transposed 2-d views (the tiled transpose) keep every element', async () => {
  const be = new CpuBackend();
  for (const [r, c] of [
    [37, 45],
    [1, 70],
    [64, 33],
    [128, 784],
  ]) {
    const src = rand(r * c + 5, r + c);
    const a = NDArray.fromData(be, src, [r * c + 5])
      .crop([[5, r * c + 5]])
      .reshape([r, c]);
    const t = a.permute([1, 0]).contiguous();
    const got = (await t.data()) as Float32Array;
    for (let i = 0; i < c; i++)
      for (let j = 0; j < r; j++)
        if (got[i * r + j] !== src[5 + j * c + i]) throw new Error(`[${r},${c}] at ${i},${j}`);
    const ints = NDArray.fromData(
      be,
      Int32Array.from({ length: r * c }, (_, i) => i * 7 - 3),
      [r, c],
    );
    const ti = (await ints.permute([1, 0]).contiguous().data()) as Int32Array;
    for (let i = 0; i < c; i++)
      for (let j = 0; j < r; j++)
        if (ti[i * r + j] !== (j * c + i) * 7 - 3) throw new Error(`int [${r},${c}] at ${i},${j}`);
  }
});
