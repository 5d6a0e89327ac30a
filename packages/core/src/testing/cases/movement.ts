import { E } from '../../expr';
import { OpCase, defineCase } from '../case';
import { TOL } from '../compare';
import { iota, randBool, randF32, randI32 } from '../inputs';
import { Pair, checkExprs, checkRead } from './pair';

/**
 * Movement ops are views: nothing runs until the result is read (a copy kernel) or used as a
 * kernel input. Each case checks both: a readback, and an add against a contiguous operand.
 */
async function readAndUse(t: Pair['t'], label: string, p: Pair): Promise<void> {
  await checkRead(t, `${label} read`, p);
  if (p.ref.dtype === 'float32') {
    const other = Pair.of(t, randF32(p.shape.slice(), 7));
    await checkExprs(t, `${label} + x`, [E.add(E.in(0), E.in(1))], [p, other], TOL.f32);
  }
}

export function movementCases(): OpCase[] {
  const base3 = () => iota([3, 4, 5]);
  return [
    defineCase(
      'movement/permute 2-d, 3-d, 5-d',
      async (t) => {
        await readAndUse(t, 'T', Pair.of(t, iota([7, 3])).permute([1, 0]));
        await readAndUse(t, '3-d', Pair.of(t, base3()).permute([2, 0, 1]));
        await readAndUse(t, '5-d', Pair.of(t, iota([2, 3, 1, 4, 2])).permute([3, 1, 4, 0, 2]));
      },
      { quick: true },
    ),
    defineCase(
      'movement/expand: new leading dims, size-1 dims, 0-d',
      async (t) => {
        await readAndUse(t, '[3,1,1]->[2,3,4,5]', Pair.of(t, iota([3, 1, 1])).expand([2, 3, 4, 5]));
        await readAndUse(t, '[]->[3,2]', Pair.of(t, iota([])).reshape([]).expand([3, 2]));
        await readAndUse(t, '[1,5]->[0,5]', Pair.of(t, iota([1, 5])).expand([0, 5]));
      },
      { quick: true },
    ),
    defineCase(
      'movement/crop: inner, edges, empty',
      async (t) => {
        await readAndUse(
          t,
          'inner',
          Pair.of(t, base3()).crop([
            [1, 3],
            [1, 4],
            [2, 5],
          ]),
        );
        await readAndUse(
          t,
          'single element',
          Pair.of(t, base3()).crop([
            [2, 3],
            [3, 4],
            [4, 5],
          ]),
        );
        await readAndUse(
          t,
          'empty',
          Pair.of(t, base3()).crop([
            [1, 1],
            [0, 4],
            [0, 5],
          ]),
        );
      },
      { quick: true },
    ),
    defineCase(
      'movement/pad: each side, 5-d, of size 0',
      async (t) => {
        await readAndUse(
          t,
          '2-d',
          Pair.of(t, iota([3, 4], 'float32', 1)).pad([
            [1, 2],
            [0, 3],
          ]),
        );
        await readAndUse(
          t,
          '5-d',
          Pair.of(t, iota([2, 1, 3, 1, 2], 'float32', 1)).pad([
            [0, 1],
            [1, 1],
            [0, 0],
            [2, 0],
            [1, 1],
          ]),
        );
        await readAndUse(
          t,
          'of size 0',
          Pair.of(t, iota([0, 2])).pad([
            [2, 1],
            [1, 0],
          ]),
        );
        await readAndUse(
          t,
          'zero widths',
          Pair.of(t, iota([2, 2])).pad([
            [0, 0],
            [0, 0],
          ]),
        );
      },
      { quick: true },
    ),
    defineCase(
      'movement/flip: one axis, all axes, size-1 and size-0 axes',
      async (t) => {
        await readAndUse(t, 'axis 1', Pair.of(t, base3()).flip([1]));
        await readAndUse(t, 'all', Pair.of(t, base3()).flip([0, 1, 2]));
        await readAndUse(t, 'size 1', Pair.of(t, iota([1, 3])).flip([0]));
        await readAndUse(t, 'size 0', Pair.of(t, iota([0, 3])).flip([0, 1]));
      },
      { quick: true },
    ),
    defineCase('movement/reshape without copy (contiguous, split, merge, size-1 dims)', async (t) => {
      const x = Pair.of(t, iota([4, 6]));
      await readAndUse(t, 'split', x.reshape([2, 2, 3, 2]));
      await readAndUse(
        t,
        'to 0-d and back',
        Pair.of(t, iota([1]))
          .reshape([])
          .reshape([1, 1]),
      );
      // Permute that keeps merged runs contiguous: [4,6] -> T [6,4] -> [3,2,4] needs no copy.
      await readAndUse(t, 'transposed split', x.permute([1, 0]).reshape([3, 2, 4]));
      await readAndUse(
        t,
        'size-1 dims',
        x
          .crop([
            [1, 2],
            [0, 6],
          ])
          .reshape([1, 6, 1]),
      );
    }),
    defineCase(
      'movement/reshape that needs a copy',
      async (t) => {
        const x = Pair.of(t, iota([4, 6]));
        await readAndUse(t, 'transposed merge', x.permute([1, 0]).reshape([24]));
        await readAndUse(
          t,
          'cropped merge',
          x
            .crop([
              [0, 4],
              [1, 5],
            ])
            .reshape([16]),
        );
        await readAndUse(t, 'flipped merge', x.flip([1]).reshape([2, 12]));
        await readAndUse(
          t,
          'padded',
          x
            .pad([
              [1, 0],
              [0, 0],
            ])
            .reshape([30]),
        );
        await readAndUse(
          t,
          'expanded',
          Pair.of(t, iota([3, 1]))
            .expand([3, 4])
            .reshape([12]),
        );
      },
      { quick: true },
    ),
    defineCase(
      'movement/compositions: pad of flip of permute; crop of pad; flip of pad',
      async (t) => {
        const x = Pair.of(t, iota([3, 4, 5], 'float32', 1));
        const pfp = x
          .permute([2, 0, 1])
          .flip([0, 2])
          .pad([
            [1, 0],
            [2, 1],
            [0, 2],
          ]);
        await readAndUse(t, 'pad(flip(permute))', pfp);
        await readAndUse(
          t,
          'crop into pad',
          x
            .pad([
              [2, 2],
              [1, 1],
              [0, 3],
            ])
            .crop([
              [1, 6],
              [0, 3],
              [2, 8],
            ]),
        );
        await readAndUse(
          t,
          'crop inside pad region only',
          x
            .pad([
              [2, 0],
              [0, 0],
              [0, 0],
            ])
            .crop([
              [0, 2],
              [0, 4],
              [0, 5],
            ]),
        );
        await readAndUse(
          t,
          'flip(pad)',
          x
            .pad([
              [0, 2],
              [1, 0],
              [0, 0],
            ])
            .flip([0, 1]),
        );
        await readAndUse(
          t,
          'pad(pad)',
          x
            .pad([
              [1, 0],
              [0, 0],
              [0, 1],
            ])
            .pad([
              [0, 1],
              [2, 0],
              [1, 1],
            ]),
        );
        await readAndUse(
          t,
          'permute(pad(crop))',
          x
            .crop([
              [1, 3],
              [0, 4],
              [1, 4],
            ])
            .pad([
              [1, 1],
              [0, 0],
              [2, 0],
            ])
            .permute([1, 2, 0]),
        );
      },
      { quick: true },
    ),
    defineCase('movement/compositions: expand of crop, flip of expand, crop of expand, pad of expand', async (t) => {
      const x = Pair.of(t, iota([5, 1], 'float32', 1));
      await readAndUse(
        t,
        'expand(crop)',
        x
          .crop([
            [1, 4],
            [0, 1],
          ])
          .expand([2, 3, 6]),
      );
      await readAndUse(t, 'flip(expand)', x.expand([5, 3]).flip([0, 1]));
      await readAndUse(
        t,
        'crop(expand)',
        x.expand([4, 5, 7]).crop([
          [1, 3],
          [2, 5],
          [0, 7],
        ]),
      );
      await readAndUse(
        t,
        'pad(expand)',
        x.expand([5, 2]).pad([
          [0, 1],
          [1, 1],
        ]),
      );
      await readAndUse(
        t,
        'expand(pad) of size 1',
        Pair.of(t, iota([1]))
          .pad([[0, 0]])
          .expand([3]),
      );
      await readAndUse(
        t,
        'expand(crop of pad, fully hidden)',
        Pair.of(t, iota([2, 1], 'float32', 1))
          .pad([
            [0, 0],
            [1, 0],
          ])
          .crop([
            [0, 2],
            [0, 1],
          ])
          .expand([2, 4]),
      );
    }),
    defineCase(
      'movement/int32 and bool views',
      async (t) => {
        await readAndUse(
          t,
          'i32 pad(flip(T))',
          Pair.of(t, randI32([3, 5], 5, -50, 50))
            .permute([1, 0])
            .flip([1])
            .pad([
              [1, 1],
              [0, 2],
            ]),
        );
        await readAndUse(
          t,
          'bool pad(flip(T))',
          Pair.of(t, randBool([3, 5], 6))
            .permute([1, 0])
            .flip([0])
            .pad([
              [2, 0],
              [1, 1],
            ]),
        );
        await readAndUse(t, 'bool expand', Pair.of(t, randBool([3, 1], 8)).expand([2, 3, 4]));
      },
      { quick: true },
    ),
    defineCase('movement/5-d chain of every op', async (t) => {
      const x = Pair.of(t, randF32([2, 3, 4, 1, 3], 9));
      const y = x
        .permute([4, 1, 0, 3, 2])
        .flip([1, 4])
        .expand([3, 3, 2, 5, 4])
        .crop([
          [0, 3],
          [1, 3],
          [0, 2],
          [1, 4],
          [1, 4],
        ])
        .pad([
          [1, 0],
          [0, 1],
          [0, 0],
          [2, 1],
          [0, 1],
        ]);
      await readAndUse(t, '5-d chain', y);
      await readAndUse(t, '5-d chain reshaped', y.reshape([12, 48]));
    }),
  ];
}
