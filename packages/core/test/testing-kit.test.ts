import { E } from '@surf/core';
import {
  TOL,
  compare,
  allclose,
  refArray,
  refCrop,
  refElementwise,
  refExpand,
  refFlip,
  refGather,
  refMatmul,
  refPad,
  refPermute,
  refReduce,
  refCast,
} from '@surf/core/testing';

// The table is only as good as its reference and its comparison: both are checked here
// against hand-computed values.
const m23 = refArray([1, 2, 3, 4, 5, 6], [2, 3]);
const vals = (r: { data: Float64Array }) => Array.from(r.data);

describe('compare', () => {
  test('NaN equals NaN, Inf must match exactly, -0 equals 0', () => {
    expect(allclose([NaN, Infinity, -Infinity, -0], [NaN, Infinity, -Infinity, 0])).toBe(true);
    expect(allclose([1], [NaN], { rtol: 1, atol: 1 })).toBe(false);
    expect(allclose([NaN], [1], { rtol: 1, atol: 1 })).toBe(false);
    expect(allclose([Infinity], [-Infinity], { rtol: 1, atol: 1 })).toBe(false);
    expect(allclose([3e38], [Infinity], { rtol: 1, atol: 1 })).toBe(false);
  });
  test('rtol, atol and the per-element magnitude', () => {
    expect(allclose([1.000009], [1], { rtol: 1e-5, atol: 0 })).toBe(true);
    expect(allclose([1.0001], [1], { rtol: 1e-5, atol: 0 })).toBe(false);
    expect(allclose([1e-7], [0], TOL.f32)).toBe(false);
    expect(allclose([1e-7], [0], { rtol: 0, atol: 2e-7 })).toBe(true);
    // A sum that cancels to ~0 is judged relative to Σ|terms|.
    expect(allclose([1e-4], [0], { rtol: 1e-5, atol: 0 }, [100])).toBe(true);
    expect(allclose([1e-2], [0], { rtol: 1e-5, atol: 0 }, [100])).toBe(false);
  });
  test('reports the worst element with its multi-index, and length mismatches', () => {
    const c = compare([1, 2, 3, 4, 5, 7], [1, 2, 3, 4.5, 5, 6], { shape: [2, 3], tol: { rtol: 0, atol: 0.1 } });
    expect(c.ok).toBe(false);
    expect(c.bad).toBe(2);
    expect(c.worst!.at).toEqual([1, 2]);
    expect(c.message).toContain('2 of 6 elements');
    expect(c.message).toContain('at [1,2] got 7, want 6');
    expect(compare([1], [1, 2]).message).toContain('got 1 elements, expected 2');
  });
});

describe('reference ops (hand values)', () => {
  test('movement', () => {
    expect(vals(refPermute(m23, [1, 0]))).toEqual([1, 4, 2, 5, 3, 6]);
    expect(vals(refFlip(m23, [0, 1]))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(
      vals(
        refCrop(m23, [
          [1, 2],
          [1, 3],
        ]),
      ),
    ).toEqual([5, 6]);
    expect(
      vals(
        refPad(m23, [
          [0, 1],
          [1, 0],
        ]),
      ),
    ).toEqual([0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0]);
    expect(vals(refExpand(refArray([7, 8], [2, 1]), [2, 2, 3]))).toEqual([7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8]);
  });
  test('reduce, matmul, gather', () => {
    expect(vals(refReduce('sum', m23, [1]).out)).toEqual([6, 15]);
    expect(vals(refReduce('max', m23, [0]).out)).toEqual([4, 5, 6]);
    expect(Array.from(refReduce('sum', refArray([1, -1], [2]), [0]).mag)).toEqual([2]);
    expect(vals(refReduce('max', refArray([], [0, 2]), [0]).out)).toEqual([-Infinity, -Infinity]);
    expect(vals(refReduce('sum', refArray([2147483647, 1], [2], 'int32'), [0]).out)).toEqual([-2147483648]);
    expect(vals(refMatmul(m23, refPermute(m23, [1, 0])).out)).toEqual([14, 32, 32, 77]);
    expect(vals(refGather(m23, 1, [2, 0, 5]))).toEqual([3, 1, 0, 6, 4, 0]);
  });
  test('expression semantics', () => {
    const i = refArray([7, -7, 5, -2147483648], [4], 'int32');
    const d = refArray([2, 2, 0, -1], [4], 'int32');
    expect(vals(refElementwise([E.div(E.in(0), E.in(1))], [i, d])[0])).toEqual([3, -3, 0, -2147483648]);
    expect(vals(refElementwise([E.mul(E.in(0), E.in(0))], [refArray([65536, 46341], [2], 'int32')])[0])).toEqual([
      0, -2147479015,
    ]);
    expect(
      vals(refElementwise([E.pow(E.in(0), E.in(1))], [refArray([-2, -2, 0], [3]), refArray([3, 0.5, 0], [3])])[0]),
    ).toEqual([-8, NaN, 1]);
    expect(vals(refElementwise([E.max(E.in(0), E.f(1))], [refArray([NaN, 0], [2])])[0])).toEqual([NaN, 1]);
    expect([NaN, 3e9, -3e9, -2.7, 0.5].map((v) => refCast(v, 'int32'))).toEqual([0, 2147483647, -2147483648, -2, 0]);
    expect([NaN, 0, -0, 0.1].map((v) => refCast(v, 'bool'))).toEqual([1, 0, 0, 1]);
    const r = refElementwise([E.add(E.in(0), E.f(2 ** -24))], [refArray([1], [1])])[0];
    expect(vals(r)).toEqual([1]); // rounded to f32 at the node
  });
});
