import { OpCase, defineCase, CaseContext } from '../case';
import { randF32, randI32 } from '../inputs';
import { RefArray, flatOf, forEachIndex, refArray } from '../reference';
import { sortAlong } from '../../scatter-sort';
import { Pair } from './pair';

/** Stable sort along `axis` by explicit loops: NaN largest, ties in original order. */
function refSort(x: RefArray, axis: number, descending: boolean): [RefArray, RefArray] {
  const n = x.shape[axis];
  const vals = new Float64Array(x.data.length),
    idxs = new Float64Array(x.data.length);
  const outer = x.shape.map((d, i) => (i === axis ? 1 : d));
  forEachIndex(outer, (at) => {
    const pos = (k: number) =>
      flatOf(
        x.shape,
        at.map((v, i) => (i === axis ? k : v)),
      );
    const key = (k: number) => x.data[pos(k)];
    const rank = (v: number) => (Number.isNaN(v) ? Infinity : v);
    const order = Array.from({ length: n }, (_, k) => k);
    // Insertion sort: obviously stable, independent of Array.prototype.sort.
    for (let a = 1; a < n; a++) {
      for (let b = a; b > 0; b--) {
        const p = rank(key(order[b - 1])),
          q = rank(key(order[b]));
        const nanP = Number.isNaN(key(order[b - 1])),
          nanQ = Number.isNaN(key(order[b]));
        const outOfOrder = descending ? q > p || (nanQ && !nanP) : p > q || (nanP && !nanQ);
        if (!outOfOrder) break;
        [order[b - 1], order[b]] = [order[b], order[b - 1]];
      }
    }
    order.forEach((k, j) => {
      vals[pos(j)] = key(k);
      idxs[pos(j)] = k;
    });
  });
  return [
    { shape: x.shape.slice(), dtype: x.dtype, data: vals },
    { shape: x.shape.slice(), dtype: 'int32', data: idxs },
  ];
}

async function checkSort(t: CaseContext, label: string, x: Pair, axis: number, descending: boolean): Promise<void> {
  const [v, i] = sortAlong(x.nd, axis, descending);
  const [wv, wi] = refSort(x.ref, axis, descending);
  await t.check(`${label} values`, v, wv);
  await t.check(`${label} indices`, i, wi);
}

export function sortCases(): OpCase[] {
  return [
    defineCase(
      'sort/rows of a [3,7] both directions',
      async (t) => {
        const x = Pair.of(t, randF32([3, 7], 1));
        await checkSort(t, 'asc', x, 1, false);
        await checkSort(t, 'desc', x, 1, true);
      },
      { quick: true },
    ),
    defineCase(
      'sort/ties are stable in both directions; NaN and infinities',
      async (t) => {
        const x = Pair.of(t, refArray([2, 1, 2, NaN, -Infinity, 1, Infinity, 2, NaN, 0, -0], [11]));
        await checkSort(t, 'asc', x, 0, false);
        await checkSort(t, 'desc', x, 0, true);
        const ints = Pair.of(t, randI32([4, 9], 2, -3, 3));
        await checkSort(t, 'i32 asc', ints, 1, false);
        await checkSort(t, 'i32 desc', ints, 1, true);
      },
      { quick: true },
    ),
    defineCase('sort/other axes and strided views', async (t) => {
      const x = Pair.of(t, randF32([4, 5, 3], 3));
      await checkSort(t, 'axis 0', x, 0, false);
      await checkSort(t, 'axis 1 desc', x, 1, true);
      await checkSort(t, 'permuted', x.permute([2, 0, 1]), 2, false);
      await checkSort(t, 'flipped', x.flip([2]), 2, true);
      await checkSort(
        t,
        'padded',
        x.pad([
          [0, 0],
          [1, 0],
          [0, 2],
        ]),
        2,
        false,
      );
    }),
    defineCase('sort/lengths that are not powers of two, 1 and 0', async (t) => {
      for (const n of [1, 2, 5, 33, 130])
        await checkSort(t, `n=${n}`, Pair.of(t, randF32([2, n], 10 + n)), 1, n % 2 === 1);
      await checkSort(t, 'n=0', Pair.of(t, refArray([], [3, 0])), 1, false);
      await checkSort(t, 'no rows', Pair.of(t, refArray([], [0, 4])), 1, false);
    }),
  ];
}
