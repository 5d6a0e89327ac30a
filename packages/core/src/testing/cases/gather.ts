import { OpCase, defineCase, CaseContext } from '../case';
import { randBool, randF32, randI32 } from '../inputs';
import { refArray, refGather } from '../reference';
import { Pair } from './pair';

async function checkGather(t: CaseContext, label: string, x: Pair, axis: number, idx: Pair): Promise<void> {
  await t.check(label, x.nd.gather(axis, idx.nd), refGather(x.ref, axis, Array.from(idx.ref.data)));
}

const ints = (v: number[]) => refArray(v, [v.length], 'int32');

export function gatherCases(): OpCase[] {
  return [
    defineCase(
      'gather/each axis of a [5,7,3]',
      async (t) => {
        const x = Pair.of(t, randF32([5, 7, 3], 1));
        await checkGather(t, 'axis 0', x, 0, Pair.of(t, ints([4, 0, 0, 2])));
        await checkGather(t, 'axis 1', x, 1, Pair.of(t, ints([6, 1, 3])));
        await checkGather(t, 'axis 2', x, 2, Pair.of(t, ints([2, 2, 0, 1, 1])));
      },
      { quick: true },
    ),
    defineCase('gather/embedding rows: [65,33] by 100 random ids', async (t) => {
      await checkGather(t, 'rows', Pair.of(t, randF32([65, 33], 2)), 0, Pair.of(t, randI32([100], 3, 0, 65)));
    }),
    defineCase(
      'gather/non-contiguous source (permuted, flipped, padded, expanded)',
      async (t) => {
        const x = Pair.of(t, randF32([4, 6], 4));
        const i = Pair.of(t, ints([1, 0, 3]));
        await checkGather(t, 'permuted', x.permute([1, 0]), 1, i);
        await checkGather(t, 'flipped', x.flip([0, 1]), 0, i);
        await checkGather(
          t,
          'padded',
          x.pad([
            [1, 1],
            [0, 2],
          ]),
          1,
          Pair.of(t, ints([0, 7, 3])),
        );
        await checkGather(t, 'expanded', Pair.of(t, randF32([1, 6], 5)).expand([4, 6]), 0, i);
      },
      { quick: true },
    ),
    defineCase('gather/non-contiguous index (cropped, flipped, expanded)', async (t) => {
      const x = Pair.of(t, randF32([6, 5], 6));
      const idx = Pair.of(t, ints([5, 0, 2, 4, 1, 3]));
      await checkGather(t, 'cropped idx', x, 0, idx.crop([[2, 5]]));
      await checkGather(t, 'flipped idx', x, 0, idx.flip([0]));
      await checkGather(t, 'expanded idx', x, 1, Pair.of(t, ints([3])).expand([4]));
      await checkGather(
        t,
        'strided idx',
        x,
        0,
        idx
          .reshape([3, 2])
          .crop([
            [0, 3],
            [1, 2],
          ])
          .reshape([3]),
      );
    }),
    defineCase('gather/int32 and bool sources, 0 and 1 indices, size-0 dims', async (t) => {
      await checkGather(t, 'i32', Pair.of(t, randI32([3, 4], 7, -9, 9)), 1, Pair.of(t, ints([3, 3])));
      await checkGather(t, 'bool', Pair.of(t, randBool([5, 2], 8)), 0, Pair.of(t, ints([4, 1])));
      await checkGather(t, 'empty idx', Pair.of(t, randF32([3, 4], 9)), 0, Pair.of(t, ints([])));
      await checkGather(t, 'size-0 other dim', Pair.of(t, randF32([3, 0], 10)), 0, Pair.of(t, ints([2, 0])));
      await checkGather(t, '1-d', Pair.of(t, randF32([7], 11)), 0, Pair.of(t, ints([6])));
    }),
    defineCase(
      'gather/out-of-range indices read as 0 (backend contract)',
      async (t) => {
        await checkGather(
          t,
          'oob',
          Pair.of(t, randF32([3, 2], 12, 1, 2)),
          0,
          Pair.of(t, ints([-1, 3, 1, 100, -2147483648])),
        );
      },
      { quick: true },
    ),
    defineCase('gather/5-d source on axis 3', async (t) => {
      const x = Pair.of(t, randF32([2, 3, 2, 4, 3], 13)).permute([1, 0, 2, 3, 4]);
      await checkGather(t, '5-d', x, 3, Pair.of(t, ints([3, 0, 0, 2, 1])));
    }),
  ];
}
