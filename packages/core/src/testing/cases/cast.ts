import { DTYPES } from '../../dtype';
import { E } from '../../expr';
import { OpCase, defineCase } from '../case';
import { Pair, checkExprs } from './pair';
import { refArray } from '../reference';

const F32_EDGE = [
  0,
  -0,
  0.5,
  -0.5,
  0.999,
  -0.999,
  1,
  -1,
  2.7,
  -2.7,
  1e9,
  -1e9,
  2147483520,
  -2147483648,
  3e9,
  -3e9,
  1e30,
  -1e30,
  Infinity,
  -Infinity,
  NaN,
  16777217,
  1.5e-38,
];
const I32_EDGE = [0, 1, -1, 2, -2, 16777217, -16777217, 2147483647, -2147483648, 123456789];
const BOOL_EDGE = [0, 1, 1, 0];

const EDGE = {
  float32: refArray(F32_EDGE.map(Math.fround), [F32_EDGE.length], 'float32'),
  int32: refArray(I32_EDGE, [I32_EDGE.length], 'int32'),
  bool: refArray(BOOL_EDGE, [BOOL_EDGE.length], 'bool'),
};

/** Every (from, to) pair, on edge values: truncation, saturation, NaN -> 0 / true, 2^24+1. */
export function castCases(): OpCase[] {
  const out: OpCase[] = [];
  for (const from of DTYPES) {
    for (const to of DTYPES) {
      out.push(
        defineCase(
          `cast/${from} -> ${to} edge values`,
          async (t) => {
            await checkExprs(t, `cast ${from}->${to}`, [E.cast(E.in(0), to)], [Pair.of(t, EDGE[from])]);
          },
          { quick: from === 'float32' || to === 'float32' },
        ),
      );
    }
  }
  out.push(
    defineCase('cast/chained casts and casts of strided inputs', async (t) => {
      const x = Pair.of(t, refArray(F32_EDGE.map(Math.fround), [F32_EDGE.length])).flip([0]);
      const chain = E.cast(E.cast(E.cast(E.in(0), 'int32'), 'bool'), 'float32');
      await checkExprs(t, 'f32->i32->bool->f32', [chain], [x]);
      await checkExprs(t, 'f32->bool->i32', [E.cast(E.cast(E.in(0), 'bool'), 'int32')], [x]);
    }),
  );
  return out;
}
