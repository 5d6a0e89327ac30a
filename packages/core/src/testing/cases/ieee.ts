import { E, Expr } from '../../expr';
import { OpCase, defineCase } from '../case';
import { TOL } from '../compare';
import { refArray } from '../reference';
import { Pair, checkExprs } from './pair';

const x0 = E.in(0);
const x1 = E.in(1);

/** IEEE special values the semantics pin down; NaN and ±Inf must match exactly. */
export function ieeeCases(): OpCase[] {
  const unary = (name: string, e: Expr, xs: number[], quick = false) =>
    defineCase(
      `ieee/${name}`,
      async (t) => {
        await checkExprs(t, name, [e], [Pair.of(t, refArray(xs.map(Math.fround), [xs.length]))], TOL.f32);
      },
      { quick },
    );
  const binary = (name: string, e: Expr, pairs: [number, number][], quick = false) =>
    defineCase(
      `ieee/${name}`,
      async (t) => {
        const a = Pair.of(
          t,
          refArray(
            pairs.map((p) => Math.fround(p[0])),
            [pairs.length],
          ),
        );
        const b = Pair.of(
          t,
          refArray(
            pairs.map((p) => Math.fround(p[1])),
            [pairs.length],
          ),
        );
        await checkExprs(t, name, [e], [a, b], TOL.f32);
      },
      { quick },
    );
  const I = Infinity;
  return [
    unary('log(0) = -Inf, log(<0) = NaN, log(Inf) = Inf', E.log(x0), [0, -0, -1, I, -I, NaN, 1], true),
    unary('sqrt(-1) = NaN, sqrt(Inf) = Inf', E.sqrt(x0), [-1, 0, I, -I, NaN, 4], true),
    unary('exp overflow to Inf, underflow to 0', E.exp(x0), [100, 89, -200, I, -I, NaN, 0], true),
    unary('recip(0) = Inf, recip(-0) = -Inf, recip(Inf) = 0', E.recip(x0), [0, -0, I, -I, NaN, 2]),
    unary('sin(Inf) = NaN', E.sin(x0), [I, -I, NaN, 0]),
    unary('neg of Inf/NaN', E.neg(x0), [I, -I, NaN, 0]),
    binary(
      '0/0 = NaN, x/0 = ±Inf',
      E.div(x0, x1),
      [
        [0, 0],
        [1, 0],
        [-1, 0],
        [1, -0],
        [I, I],
        [1, I],
        [NaN, 1],
      ],
      true,
    ),
    binary('Inf - Inf = NaN, 0 * Inf = NaN, overflow', E.add(E.sub(x0, x1), E.mul(x0, E.f(0))), [
      [I, I],
      [1, 2],
      [3e38, -3e38],
      [-I, -I],
    ]),
    binary('mul overflow to Inf', E.mul(x0, x1), [
      [3e38, 10],
      [-3e38, 10],
      [1e-30, 1e-30],
    ]),
    binary(
      'max propagates NaN from either side',
      E.max(x0, x1),
      [
        [NaN, 1],
        [1, NaN],
        [NaN, NaN],
        [-I, 1],
        [I, NaN],
        [-0, 0],
      ],
      true,
    ),
    binary(
      'eq and lt with NaN are false',
      E.add(E.cast(E.eq(x0, x1), 'float32'), E.mul(E.f(2), E.cast(E.lt(x0, x1), 'float32'))),
      [
        [NaN, NaN],
        [NaN, 1],
        [1, NaN],
        [I, I],
        [-I, I],
        [1, 1],
        [0, -0],
      ],
      true,
    ),
    binary(
      'pow: negative base with integer exponent, non-integer exponent is NaN, pow(0,0) = 1',
      E.pow(x0, x1),
      [
        [-2, 3],
        [-2, 2],
        [-2, -1],
        [-2, 0.5],
        [-8, 1 / 3],
        [0, 0],
        [-0, 0],
        [0, -1],
        [0, 2],
        [2, -1],
        [NaN, 0],
        [1, NaN],
        [1, I],
        [-1, I],
        [I, -1],
        [-I, 3],
        [2, 0.5],
        [-3, 5],
      ],
      true,
    ),
  ];
}
