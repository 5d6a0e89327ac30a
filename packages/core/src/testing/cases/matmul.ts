import { OpCase, defineCase, CaseContext } from '../case';
import { TOL } from '../compare';
import { randF32 } from '../inputs';
import { refMatmul } from '../reference';
import { Pair } from './pair';

async function checkMatmul(t: CaseContext, label: string, a: Pair, b: Pair): Promise<void> {
  const { out, mag } = refMatmul(a.ref, b.ref);
  await t.check(label, a.nd.matmul(b.nd), out, TOL.accumulate, mag);
}

export function matmulCases(): OpCase[] {
  const sizes: [number, number, number][] = [
    [1, 1, 1],
    [3, 7, 5],
    [7, 3, 33],
    [33, 65, 7],
    [65, 33, 65],
    [1, 65, 1],
    [65, 1, 33],
  ];
  const out: OpCase[] = sizes.map(([m, k, n], i) =>
    defineCase(
      `matmul/[${m},${k}]x[${k},${n}]`,
      async (t) => {
        await checkMatmul(t, 'mm', Pair.of(t, randF32([m, k], 100 + i)), Pair.of(t, randF32([k, n], 200 + i)));
      },
      { quick: i < 3 },
    ),
  );
  out.push(
    defineCase('matmul/larger [96,200]x[200,130] and [128,128]x[128,128]', async (t) => {
      await checkMatmul(t, '96x200x130', Pair.of(t, randF32([96, 200], 1)), Pair.of(t, randF32([200, 130], 2)));
      await checkMatmul(t, '128^3', Pair.of(t, randF32([128, 128], 3)), Pair.of(t, randF32([128, 128], 4)));
    }),
    defineCase(
      'matmul/transposed operands via permute (aT b, a bT, aT bT)',
      async (t) => {
        const a = Pair.of(t, randF32([7, 5], 5)); // used as [5,7]
        const b = Pair.of(t, randF32([3, 7], 6)); // used as [7,3]
        await checkMatmul(t, 'aT b', a.permute([1, 0]), Pair.of(t, randF32([7, 3], 7)));
        await checkMatmul(t, 'a bT', Pair.of(t, randF32([5, 7], 8)), b.permute([1, 0]));
        await checkMatmul(t, 'aT bT', a.permute([1, 0]), b.permute([1, 0]));
      },
      { quick: true },
    ),
    defineCase(
      'matmul/batched [2,3,7,5]x[2,3,5,4]',
      async (t) => {
        await checkMatmul(t, 'batched', Pair.of(t, randF32([2, 3, 7, 5], 9)), Pair.of(t, randF32([2, 3, 5, 4], 10)));
      },
      { quick: true },
    ),
    defineCase(
      'matmul/broadcast batch [3,1,7,5]x[4,5,3] and [7,5]x[2,5,3]',
      async (t) => {
        await checkMatmul(
          t,
          'batch 3x1 with 4',
          Pair.of(t, randF32([3, 1, 7, 5], 11)),
          Pair.of(t, randF32([4, 5, 3], 12)),
        );
        await checkMatmul(t, 'unbatched a', Pair.of(t, randF32([7, 5], 13)), Pair.of(t, randF32([2, 5, 3], 14)));
      },
      { quick: true },
    ),
    defineCase('matmul/strided operands: flipped, cropped, expanded, padded, batch-transposed', async (t) => {
      const a = Pair.of(t, randF32([9, 8], 15));
      const b = Pair.of(t, randF32([8, 6], 16));
      await checkMatmul(t, 'flipped', a.flip([0, 1]), b.flip([0]));
      await checkMatmul(
        t,
        'cropped',
        a.crop([
          [1, 8],
          [2, 7],
        ]),
        b.crop([
          [0, 5],
          [1, 6],
        ]),
      );
      await checkMatmul(t, 'expanded rows', Pair.of(t, randF32([1, 8], 17)).expand([5, 8]), b);
      await checkMatmul(
        t,
        'padded',
        a.pad([
          [1, 0],
          [0, 2],
        ]),
        Pair.of(t, randF32([10, 4], 18)),
      );
      const ab = Pair.of(t, randF32([5, 3, 4], 19)).permute([1, 0, 2]); // batch 3 of [5,4]
      await checkMatmul(t, 'batch-permuted', ab, Pair.of(t, randF32([3, 4, 2], 20)).permute([0, 1, 2]));
    }),
    defineCase(
      'matmul/size 0: m = 0, n = 0, k = 0 (zeros), batch 0',
      async (t) => {
        await checkMatmul(t, 'm=0', Pair.of(t, randF32([0, 3], 21)), Pair.of(t, randF32([3, 4], 22)));
        await checkMatmul(t, 'n=0', Pair.of(t, randF32([2, 3], 23)), Pair.of(t, randF32([3, 0], 24)));
        await checkMatmul(t, 'k=0', Pair.of(t, randF32([2, 0], 25)), Pair.of(t, randF32([0, 4], 26)));
        await checkMatmul(t, 'batch 0', Pair.of(t, randF32([0, 2, 3], 27)), Pair.of(t, randF32([3, 4], 28)));
      },
      { quick: true },
    ),
  );
  return out;
}
