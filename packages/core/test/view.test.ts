import { View } from '@surf/core';
import { forEachIndex, randI32 } from '@surf/core/testing';

// Buffer index each element of a view reads, in row-major order, by the definition
// offset + Σ i·stride (or -1 when masked), written out here rather than via indexOf.
function addresses(v: View): number[] {
  const out: number[] = [];
  forEachIndex(v.shape, (idx) => {
    let o = v.offset;
    let hidden = false;
    idx.forEach((i, d) => {
      if (v.mask && (i < v.mask[d][0] || i >= v.mask[d][1])) hidden = true;
      o += i * v.strides[d];
    });
    out.push(hidden ? -1 : o);
  });
  return out;
}

describe('View basics', () => {
  test('contiguous strides, size, 0-d and size-0', () => {
    const v = View.contiguous([2, 3, 4]);
    expect(v.strides).toEqual([12, 4, 1]);
    expect(v.size).toBe(24);
    expect(v.isPlain).toBe(true);
    expect(View.contiguous([]).size).toBe(1);
    expect(View.contiguous([]).strides).toEqual([]);
    expect(View.contiguous([3, 0, 2]).size).toBe(0);
  });
  test('indexOf follows offset + Σ i·stride and the mask', () => {
    const v = new View([3, 4], [-4, 1], 8, [
      [1, 3],
      [0, 2],
    ]);
    expect(v.indexOf([2, 1])).toBe(8 - 8 + 1);
    expect(v.indexOf([0, 0])).toBe(-1);
    expect(v.indexOf([1, 3])).toBe(-1);
  });
  test('a mask covering everything is dropped', () => {
    expect(
      new View([2, 3], [3, 1], 0, [
        [0, 2],
        [0, 3],
      ]).mask,
    ).toBeNull();
    expect(
      new View([2, 3], [3, 1], 0, [
        [0, 2],
        [1, 3],
      ]).mask,
    ).toEqual([
      [0, 2],
      [1, 3],
    ]);
  });
  test('isContiguous ignores size-1 dims strides but not offsets', () => {
    expect(new View([1, 3], [99, 1], 0).isContiguous).toBe(true);
    expect(new View([3], [1], 2).isContiguous).toBe(true);
    expect(new View([3], [1], 2).isPlain).toBe(false);
    expect(new View([3], [-1], 2).isContiguous).toBe(false);
  });
});

describe('movement ops on views (hand values)', () => {
  test('permute moves strides and mask', () => {
    const v = View.contiguous([2, 3, 4])
      .pad([
        [1, 0],
        [0, 0],
        [0, 2],
      ])
      .permute([2, 0, 1]);
    expect(v.shape).toEqual([6, 3, 3]);
    expect(v.strides).toEqual([1, 12, 4]);
    expect(v.mask).toEqual([
      [0, 4],
      [1, 3],
      [0, 3],
    ]);
  });
  test('expand: stride 0 on grown dims and new leading dims', () => {
    const v = View.contiguous([3, 1]).expand([2, 3, 5]);
    expect(v.strides).toEqual([0, 1, 0]);
    expect(addresses(v).slice(0, 6)).toEqual([0, 0, 0, 0, 0, 1]);
  });
  test('pad: a mask and a shifted (possibly negative) offset, no copy', () => {
    const v = View.contiguous([2, 3]).pad([
      [1, 1],
      [2, 0],
    ]);
    expect(v.shape).toEqual([4, 5]);
    expect(v.offset).toBe(-3 - 2);
    expect(v.mask).toEqual([
      [1, 3],
      [2, 5],
    ]);
    expect(addresses(v)).toEqual([-1, -1, -1, -1, -1, -1, -1, 0, 1, 2, -1, -1, 3, 4, 5, -1, -1, -1, -1, -1]);
  });
  test('crop: offset moves, mask clipped into the new frame', () => {
    const v = View.contiguous([2, 3])
      .pad([
        [1, 1],
        [2, 0],
      ])
      .crop([
        [0, 2],
        [1, 4],
      ]);
    expect(v.shape).toEqual([2, 3]);
    expect(v.mask).toEqual([
      [1, 2],
      [1, 3],
    ]);
    expect(addresses(v)).toEqual([-1, -1, -1, -1, 0, 1]);
    // Cropping entirely inside the padding hides everything.
    expect(
      addresses(
        View.contiguous([2])
          .pad([[3, 0]])
          .crop([[0, 2]]),
      ),
    ).toEqual([-1, -1]);
  });
  test('flip: negative stride, offset at the far end, mirrored mask; size-0 axis is a no-op', () => {
    const v = View.contiguous([2, 3]).flip([1]);
    expect(v.strides).toEqual([3, -1]);
    expect(v.offset).toBe(2);
    expect(addresses(v)).toEqual([2, 1, 0, 5, 4, 3]);
    expect(
      View.contiguous([4])
        .pad([[1, 0]])
        .flip([0]).mask,
    ).toEqual([[0, 4]]);
    expect(View.contiguous([0, 2]).flip([0]).offset).toBe(0);
  });
  test('empty crop has offset 0 so kernels index sanely', () => {
    expect(
      View.contiguous([4, 4]).crop([
        [2, 2],
        [1, 3],
      ]).offset,
    ).toBe(0);
  });
});

describe('reshape: no-copy vs copy decisions', () => {
  test('contiguous: always a view', () => {
    const v = View.contiguous([4, 6])
      .crop([
        [1, 3],
        [0, 6],
      ])
      .reshape([3, 4])!;
    expect(v).not.toBeNull();
    expect(v.strides).toEqual([4, 1]);
    expect(v.offset).toBe(6);
  });
  test('transposed: splitting a dim is a view, merging transposed dims needs a copy', () => {
    const t = View.contiguous([4, 6]).permute([1, 0]); // strides [1,6]
    expect(t.reshape([3, 2, 4])!.strides).toEqual([2, 1, 6]);
    expect(t.reshape([24])).toBeNull();
    expect(t.reshape([6, 2, 2])!.strides).toEqual([1, 12, 6]);
  });
  test('flipped: splitting the flipped dim is a view, merging across it is not', () => {
    const f = View.contiguous([4, 6]).flip([1]);
    expect(f.reshape([4, 3, 2])!.strides).toEqual([6, -2, -1]);
    expect(f.reshape([2, 12])).toBeNull();
  });
  test('expanded: splitting a broadcast dim is a view, merging it is not', () => {
    const e = View.contiguous([3, 1]).expand([3, 4]);
    expect(e.reshape([3, 2, 2])!.strides).toEqual([1, 0, 0]);
    expect(e.reshape([12])).toBeNull();
  });
  test('masked views need a copy unless the shape is unchanged; size 0 never does', () => {
    const p = View.contiguous([2, 2]).pad([
      [1, 0],
      [0, 0],
    ]);
    expect(p.reshape([6])).toBeNull();
    expect(p.reshape([3, 2])).toBe(p);
    expect(View.contiguous([2, 0]).flip([0]).reshape([0, 5])!.shape).toEqual([0, 5]);
  });
  test('size-1 dims are added and removed freely', () => {
    const t = View.contiguous([4, 6]).permute([1, 0]);
    expect(t.reshape([6, 1, 4, 1])).not.toBeNull();
    expect(t.reshape([1, 6, 4])).not.toBeNull();
    const one = View.contiguous([3])
      .crop([[1, 2]])
      .reshape([])!;
    expect(one.offset).toBe(1);
    expect(addresses(one)).toEqual([1]);
  });

  // Property: whenever reshape returns a view, it reads the same buffer elements in the same
  // row-major order as the original. Random views built from every movement op.
  test('a returned view reads exactly the original elements in order (random views)', () => {
    const dims = randI32([320], 'reshape-dims', 1, 4).data;
    const ops = randI32([240], 'reshape-ops', 0, 6).data;
    let k = 0;
    let q = 0;
    let views = 0,
      copies = 0;
    for (let trial = 0; trial < 80; trial++) {
      const shape = [dims[k++], dims[k++], dims[k++], dims[k++]];
      let v = View.contiguous(shape);
      for (let s = 0; s < 3; s++) {
        const op = ops[q++];
        if (op === 0) v = v.permute([3, 1, 0, 2]);
        else if (op === 1) v = v.flip([q % 4]);
        else if (op === 2) v = v.crop(v.shape.map((d) => [d > 1 ? 1 : 0, d] as [number, number]));
        else if (op === 3) v = v.reshape(v.shape.map((d) => d))!;
        else if (op === 4) {
          const w = v.shape.map((d) => (d === 1 ? 2 : d));
          if (v.shape.includes(1)) v = v.expand(w);
        }
      }
      const n = v.size;
      // Every factorization of n into 1..3 factors from the original dims.
      const targets = [
        [n],
        [v.shape[0], n / v.shape[0]],
        [v.shape[0] * v.shape[1], v.shape[2], v.shape[3]],
        [v.shape[0], v.shape[1] * v.shape[2] * v.shape[3]],
        [...v.shape, 1],
        [1, ...v.shape.slice().reverse()].map((d, i) => (i === 0 ? 1 : v.shape[v.shape.length - i])),
      ];
      for (const t of targets) {
        const r = v.reshape(t);
        if (r === null) {
          copies++;
          continue;
        }
        views++;
        expect(r.shape).toEqual(t);
        expect(addresses(r)).toEqual(addresses(v));
      }
    }
    // Both outcomes must occur, or the property would be vacuous.
    expect(views).toBeGreaterThan(50);
    expect(copies).toBeGreaterThan(20);
  });
});
