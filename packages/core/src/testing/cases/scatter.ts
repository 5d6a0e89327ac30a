import { OpCase, defineCase, CaseContext } from '../case';
import { TOL } from '../compare';
import { randBool, randF32, randI32 } from '../inputs';
import { RefArray, refArray } from '../reference';
import { scatterFlat } from '../../scatter-sort';
import type { ScatterMode } from '../../backend';
import { Pair } from './pair';

/** The contract's scatter on flat positions, with a sequential loop as the reference. */
function refScatter(mode: ScatterMode, base: RefArray, idx: readonly number[], src: readonly number[]): RefArray {
  const data = Float64Array.from(base.data);
  idx.forEach((p, i) => {
    if (p < 0 || p >= data.length) return;
    data[p] = mode === 'add' ? (base.dtype === 'int32' ? (data[p] + src[i]) | 0 : data[p] + src[i]) : src[i];
  });
  return { shape: base.shape.slice(), dtype: base.dtype, data };
}

async function checkScatter(
  t: CaseContext,
  label: string,
  mode: ScatterMode,
  base: Pair,
  idx: Pair,
  src: Pair,
): Promise<void> {
  const got = scatterFlat(mode, base.nd, idx.nd, src.nd);
  const want = refScatter(mode, base.ref, Array.from(idx.ref.data), Array.from(src.ref.data));
  // Float adds of duplicates land in no fixed order on a GPU: allow reassociation error.
  await t.check(label, got, want, mode === 'add' && base.ref.dtype === 'float32' ? TOL.fused : undefined);
}

const ints = (v: number[]) => refArray(v, [v.length], 'int32');

export function scatterCases(): OpCase[] {
  return [
    defineCase(
      'scatter/set and add at distinct positions of a [4,5]',
      async (t) => {
        const base = Pair.of(t, randF32([4, 5], 1));
        const idx = Pair.of(t, ints([0, 7, 19, 3, 12]));
        const src = Pair.of(t, randF32([5], 2));
        await checkScatter(t, 'set', 'set', base, idx, src);
        await checkScatter(t, 'add', 'add', base, idx, src);
      },
      { quick: true },
    ),
    defineCase(
      'scatter/add with many duplicates (atomic float add)',
      async (t) => {
        const base = Pair.of(t, randF32([6], 3));
        await checkScatter(
          t,
          'dups f32',
          'add',
          base,
          Pair.of(t, randI32([300], 4, 0, 6)),
          Pair.of(t, randF32([300], 5)),
        );
        const ibase = Pair.of(t, randI32([5], 6, -10, 10));
        await checkScatter(
          t,
          'dups i32',
          'add',
          ibase,
          Pair.of(t, randI32([200], 7, 0, 5)),
          Pair.of(t, randI32([200], 8, -50, 50)),
        );
      },
      { quick: true },
    ),
    defineCase('scatter/out-of-range positions are skipped; empty index', async (t) => {
      const base = Pair.of(t, randF32([3, 2], 9));
      await checkScatter(
        t,
        'oob',
        'add',
        base,
        Pair.of(t, ints([-1, 6, 2, 100, -2147483648])),
        Pair.of(t, randF32([5], 10)),
      );
      await checkScatter(t, 'empty', 'set', base, Pair.of(t, ints([])), Pair.of(t, refArray([], [0])));
    }),
    defineCase('scatter/strided base, index and source views', async (t) => {
      const base = Pair.of(t, randF32([5, 4], 11))
        .permute([1, 0])
        .flip([0]);
      const idx = Pair.of(t, ints([3, 9, 1, 17, 0, 5, 8]))
        .flip([0])
        .crop([[1, 6]]);
      const src = Pair.of(t, randF32([10], 12)).crop([[2, 7]]);
      await checkScatter(t, 'set', 'set', base, idx, src);
      await checkScatter(
        t,
        'add',
        'add',
        base.pad([
          [1, 0],
          [0, 1],
        ]),
        idx,
        src,
      );
    }),
    defineCase('scatter/int32 and bool set', async (t) => {
      await checkScatter(
        t,
        'i32',
        'set',
        Pair.of(t, randI32([2, 3], 13, -5, 5)),
        Pair.of(t, ints([5, 0])),
        Pair.of(t, randI32([2], 14, 100, 200)),
      );
      await checkScatter(
        t,
        'bool',
        'set',
        Pair.of(t, randBool([7], 15)),
        Pair.of(t, ints([6, 1, 2])),
        Pair.of(t, randBool([3], 16)),
      );
    }),
  ];
}
