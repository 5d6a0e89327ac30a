import type { ReduceOp } from '../../backend';
import { OpCase, defineCase, CaseContext } from '../case';
import { EXACT, TOL } from '../compare';
import { iota, randF32, randI32 } from '../inputs';
import { refReduce } from '../reference';
import { Pair } from './pair';

function subsets(n: number): number[][] {
  const out: number[][] = [];
  for (let m = 0; m < 1 << n; m++) out.push([...Array(n).keys()].filter((d) => m & (1 << d)));
  return out;
}

/** Reduces p over axes with keepdim and checks against the reference (max is exact). */
async function checkReduce(t: CaseContext, op: ReduceOp, p: Pair, axes: readonly number[], label = ''): Promise<void> {
  const got = op === 'sum' ? p.nd.sum(axes, true) : p.nd.max(axes, true);
  const { out, mag } = refReduce(op, p.ref, axes);
  const exact = op === 'max' || p.ref.dtype === 'int32';
  await t.check(`${label}${op}[${axes.join(',')}]`, got, out, exact ? EXACT : TOL.accumulate, exact ? undefined : mag);
}

export function reduceCases(): OpCase[] {
  const out: OpCase[] = [];
  for (const op of ['sum', 'max'] as ReduceOp[]) {
    out.push(
      defineCase(
        `reduce/${op} every axis subset of a 3-d [3,7,5]`,
        async (t) => {
          const x = Pair.of(t, randF32([3, 7, 5], 1, -2, 2));
          for (const axes of subsets(3)) await checkReduce(t, op, x, axes);
        },
        { quick: true },
      ),
    );
    out.push(
      defineCase(`reduce/${op} every axis subset of a 5-d [2,3,1,4,3]`, async (t) => {
        const x = Pair.of(t, randF32([2, 3, 1, 4, 3], 2, -2, 2));
        for (const axes of subsets(5)) await checkReduce(t, op, x, axes);
      }),
    );
    out.push(
      defineCase(
        `reduce/${op} of non-contiguous inputs (permuted, flipped, expanded, cropped, padded)`,
        async (t) => {
          const x = Pair.of(t, randF32([5, 7, 3], 3, -2, 2));
          const views: [string, Pair][] = [
            ['permuted+flipped ', x.permute([2, 0, 1]).flip([1])],
            ['expanded ', Pair.of(t, randF32([5, 1, 3], 4)).expand([5, 6, 3])],
            [
              'cropped ',
              x.crop([
                [1, 4],
                [2, 7],
                [0, 2],
              ]),
            ],
            [
              'padded ',
              x.pad([
                [1, 0],
                [0, 2],
                [1, 1],
              ]),
            ],
          ];
          for (const [name, v] of views) for (const axes of subsets(3)) await checkReduce(t, op, v, axes, name);
        },
        { quick: op === 'sum' },
      ),
    );
    out.push(
      defineCase(
        `reduce/${op} with size-0 axes`,
        async (t) => {
          const x = Pair.of(t, randF32([3, 0, 4], 5));
          for (const axes of subsets(3)) await checkReduce(t, op, x, axes);
          const xi = Pair.of(t, randI32([0, 2], 6, 0, 5));
          for (const axes of subsets(2)) await checkReduce(t, op, xi, axes, 'i32 ');
        },
        { quick: true },
      ),
    );
    out.push(
      defineCase(
        `reduce/${op} int32 (wraps on overflow)`,
        async (t) => {
          await checkReduce(t, op, Pair.of(t, randI32([7, 9], 7, -1000, 1000)).permute([1, 0]), [1]);
          await checkReduce(t, op, Pair.of(t, randI32([7, 9], 8, -1000, 1000)), [0, 1]);
          const big = Pair.of(t, randI32([3, 4], 9, 2147483000, 2147483647));
          await checkReduce(t, op, big, [1]);
          await checkReduce(t, op, Pair.of(t, iota([4], 'int32', -2147483648)), [0]);
        },
        { quick: op === 'sum' },
      ),
    );
    out.push(
      defineCase(`reduce/${op} of 0-d and of size-1 dims`, async (t) => {
        await checkReduce(t, op, Pair.of(t, iota([], 'float32', 3)), []);
        await checkReduce(t, op, Pair.of(t, iota([1, 1, 1], 'float32', 3)), [0, 2]);
        await checkReduce(t, op, Pair.of(t, iota([1, 5, 1])), [1]);
      }),
    );
    out.push(
      defineCase(`reduce/${op} long rows (1, 65, 4099, 65537 elements)`, async (t) => {
        for (const n of [1, 65, 4099]) await checkReduce(t, op, Pair.of(t, randF32([3, n], n, -1, 1)), [1]);
        await checkReduce(t, op, Pair.of(t, randF32([65537], 10, 0, 1)), [0]);
        await checkReduce(t, op, Pair.of(t, randF32([257, 3], 11)), [0]);
      }),
    );
  }
  out.push(
    defineCase(
      'reduce/max with NaN and Inf, and all -Inf',
      async (t) => {
        const x = Pair.of(t, {
          shape: [4, 3],
          dtype: 'float32',
          data: Float64Array.from([1, NaN, 3, -Infinity, -Infinity, -Infinity, Infinity, 2, NaN, 5, 4, 6]),
        });
        await checkReduce(t, 'max', x, [0]);
        await checkReduce(t, 'max', x, [1]);
        await checkReduce(t, 'sum', x, [1]);
      },
      { quick: true },
    ),
  );
  return out;
}
