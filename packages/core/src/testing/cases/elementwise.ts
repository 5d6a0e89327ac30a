import { BINARY_OPS, E, Expr, UNARY_OPS } from '../../expr';
import { BINARY_TABLE, Domain, UNARY_TABLE, acceptedDTypes } from '../../ops/table';
import { NDArray } from '../../ndarray';
import { OpCase, defineCase } from '../case';
import { TOL, Tolerance } from '../compare';
import { iota, randBool, randF32, randF32Signed, randI32 } from '../inputs';
import { refElementwise } from '../ref-expr';
import { RefArray, refArray } from '../reference';
import { Pair, checkExprs } from './pair';

const x0 = E.in(0);
const x1 = E.in(1);
const x2 = E.in(2);

/** Float32 operands inside an op's test domain (the op table's `test.domain`). */
function gen(dom: Domain): (shape: number[], seed: number) => RefArray {
  if (dom.grid) {
    // Multiples of 1/4: ties for round, equal pairs for eq/lt, exact integers for floor.
    return (s, seed) => {
      const r = randI32(s, seed, dom.lo * 4, dom.hi * 4);
      return { ...r, dtype: 'float32', data: r.data.map((v) => v / 4) };
    };
  }
  return dom.signed
    ? (s, seed) => randF32Signed(s, seed, dom.lo, dom.hi)
    : (s, seed) => randF32(s, seed, dom.lo, dom.hi);
}

const FLOAT_UNARY = UNARY_OPS.filter((op) => acceptedDTypes(UNARY_TABLE[op].dtypes).includes('float32'));
const FLOAT_BINARY = BINARY_OPS.filter((op) => acceptedDTypes(BINARY_TABLE[op].dtypes).includes('float32'));
const INT_UNARY = UNARY_OPS.filter((op) => acceptedDTypes(UNARY_TABLE[op].dtypes).includes('int32'));
const INT_BINARY = BINARY_OPS.filter((op) => acceptedDTypes(BINARY_TABLE[op].dtypes).includes('int32'));
const BOOL_BINARY = BINARY_OPS.filter((op) => acceptedDTypes(BINARY_TABLE[op].dtypes).includes('bool'));

const INT_EDGE = [0, 1, -1, 7, -7, 2147483647, -2147483648, 65536, -65536, 46341, 3, -3, 100000, 12345678, -2];

function unaryCases(): OpCase[] {
  const out: OpCase[] = [];
  for (const op of FLOAT_UNARY) {
    const { tol } = UNARY_TABLE[op].test;
    const g = gen(UNARY_TABLE[op].test.domain[0]);
    out.push(
      defineCase(
        `elementwise/${op} f32 [33]`,
        async (t) => {
          await checkExprs(t, op, [E.un(op, x0)], [Pair.of(t, g([33], 11))], tol);
        },
        { quick: true },
      ),
    );
    out.push(
      defineCase(`elementwise/${op} f32 permuted+flipped [7,5,3]`, async (t) => {
        const p = Pair.of(t, g([3, 7, 5], 12))
          .permute([1, 2, 0])
          .flip([0]);
        await checkExprs(t, op, [E.un(op, x0)], [p], tol);
      }),
    );
  }
  for (const op of INT_UNARY) {
    out.push(
      defineCase(
        `elementwise/${op} i32 edge values (wraps at INT_MIN)`,
        async (t) => {
          await checkExprs(t, op, [E.un(op, x0)], [Pair.of(t, refArray(INT_EDGE, [INT_EDGE.length], 'int32'))]);
        },
        { quick: op === 'neg' },
      ),
    );
  }
  out.push(
    defineCase('elementwise/float specials through every float unary op (NaN, ±Inf, ±0, domain edges)', async (t) => {
      const sp = Pair.of(
        t,
        refArray(
          [NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -0.5, 1.5, -2.5, 1e-6, -1e-6, 30, -30, 100, -100].map(
            Math.fround,
          ),
          [17],
        ),
      );
      for (const op of FLOAT_UNARY) {
        // GPUs may flush a denormal result (exp(-100)) to 0.
        const tol = UNARY_TABLE[op].test.tol;
        await checkExprs(t, `${op} specials`, [E.un(op, x0)], [sp], {
          rtol: tol.rtol,
          atol: Math.max(tol.atol, 1e-37),
        });
      }
    }),
  );
  return out;
}

function binaryCases(): OpCase[] {
  const out: OpCase[] = [];
  for (const op of FLOAT_BINARY) {
    const { tol, domain } = BINARY_TABLE[op].test;
    const [a, b] = domain.map(gen);
    out.push(
      defineCase(
        `elementwise/${op} f32 [7,33]`,
        async (t) => {
          await checkExprs(t, op, [E.bin(op, x0, x1)], [Pair.of(t, a([7, 33], 21)), Pair.of(t, b([7, 33], 22))], tol);
        },
        { quick: true },
      ),
    );
    out.push(
      defineCase(`elementwise/${op} f32 broadcast [7,1]x[1,33] and [33]`, async (t) => {
        await checkExprs(t, op, [E.bin(op, x0, x1)], [Pair.of(t, a([7, 1], 23)), Pair.of(t, b([1, 33], 24))], tol);
        await checkExprs(
          t,
          `${op} rhs [33]`,
          [E.bin(op, x0, x1)],
          [Pair.of(t, a([7, 33], 25)), Pair.of(t, b([33], 26))],
          tol,
        );
      }),
    );
    out.push(
      defineCase(`elementwise/${op} f32 transposed x cropped`, async (t) => {
        const pa = Pair.of(t, a([9, 5], 27)).permute([1, 0]);
        const pb = Pair.of(t, b([7, 12], 28)).crop([
          [1, 6],
          [2, 11],
        ]);
        await checkExprs(t, op, [E.bin(op, x0, x1)], [pa, pb], tol);
      }),
    );
  }
  const intA = refArray(
    INT_EDGE.flatMap((v) => INT_EDGE.map(() => v)),
    [INT_EDGE.length, INT_EDGE.length],
    'int32',
  );
  const intB = refArray(
    INT_EDGE.flatMap(() => INT_EDGE),
    [INT_EDGE.length, INT_EDGE.length],
    'int32',
  );
  for (const op of INT_BINARY) {
    out.push(
      defineCase(
        `elementwise/${op} i32 edge values (wrap, trunc, /0 = 0)`,
        async (t) => {
          await checkExprs(t, op, [E.bin(op, x0, x1)], [Pair.of(t, intA), Pair.of(t, intB)]);
        },
        { quick: op === 'div' || op === 'mul' },
      ),
    );
    out.push(
      defineCase(`elementwise/${op} i32 random, broadcast, flipped`, async (t) => {
        const pa = Pair.of(t, randI32([5, 1, 7], 31, -1000, 1000)).flip([2]);
        const pb = Pair.of(t, randI32([3, 7], 32, -30, 30));
        await checkExprs(t, op, [E.bin(op, x0, x1)], [pa, pb]);
      }),
    );
  }
  for (const op of BOOL_BINARY) {
    out.push(
      defineCase(
        `elementwise/${op} bool`,
        async (t) => {
          await checkExprs(
            t,
            op,
            [E.bin(op, x0, x1)],
            [Pair.of(t, randBool([4, 9], 41)), Pair.of(t, randBool([4, 9], 42))],
          );
        },
        { quick: op === 'eq' },
      ),
    );
  }
  return out;
}

function whereAndConstCases(): OpCase[] {
  return [
    defineCase(
      'elementwise/where f32, i32, bool branches, broadcast condition',
      async (t) => {
        const c = Pair.of(t, randBool([5, 1], 51));
        await checkExprs(
          t,
          'where f32',
          [E.where(x0, x1, x2)],
          [c, Pair.of(t, randF32([5, 6], 52)), Pair.of(t, randF32([6], 53))],
        );
        await checkExprs(
          t,
          'where i32',
          [E.where(x0, x1, x2)],
          [c, Pair.of(t, randI32([5, 6], 54, -9, 9)), Pair.of(t, randI32([1, 6], 55, -9, 9))],
        );
        await checkExprs(
          t,
          'where bool',
          [E.where(x0, x1, x2)],
          [c, Pair.of(t, randBool([5, 6], 56)), Pair.of(t, randBool([5, 6], 57))],
        );
      },
      { quick: true },
    ),
    defineCase('elementwise/where from a comparison with consts', async (t) => {
      // relu and a clamp, as the frontend builds them.
      const x = Pair.of(t, randF32([65], 58, -2, 2));
      await checkExprs(t, 'relu', [E.where(E.lt(x0, E.f(0)), E.f(0), x0)], [x]);
      await checkExprs(t, 'clamp', [E.where(E.lt(E.f(1), x0), E.f(1), E.where(E.lt(x0, E.f(-1)), E.f(-1), x0))], [x]);
    }),
    defineCase(
      'elementwise/full of every dtype (const-only expression)',
      async (t) => {
        for (const [v, dt] of [
          [2.5, 'float32'],
          [-7, 'int32'],
          [1, 'bool'],
          [0, 'bool'],
          [0.1, 'float32'],
          [3.9, 'int32'],
        ] as const) {
          const got = NDArray.full(t.backend, [3, 5], v, dt);
          await t.check(`full ${v} ${dt}`, got, refElementwise([E.c(v, dt)], [], [3, 5])[0]);
        }
        await t.check('full 0-d', NDArray.full(t.backend, [], -1.5), refArray([-1.5], [], 'float32'));
        await t.check('full size 0', NDArray.full(t.backend, [4, 0, 2], 1), refArray([], [4, 0, 2], 'float32'));
      },
      { quick: true },
    ),
    defineCase(
      'elementwise/constants are parameters: same structure, new values',
      async (t) => {
        // A backend that caches kernels by structure must still use each call's constants.
        const x = Pair.of(t, randF32([33], 61));
        for (const lr of [0.1, 0.01, -3, 1e-8]) {
          await checkExprs(t, `x*${lr}+${lr * 2}`, [E.add(E.mul(x0, E.f(lr)), E.f(lr * 2))], [x], TOL.f32);
        }
        const xi = Pair.of(t, randI32([33], 62, -100, 100));
        for (const k of [3, -5, 0]) await checkExprs(t, `i32 x/${k}`, [E.div(x0, E.i(k))], [xi]);
      },
      { quick: true },
    ),
    defineCase('elementwise/const of a value f32 cannot hold is rounded', async (t) => {
      await checkExprs(
        t,
        'x+0.1',
        [E.add(x0, E.f(0.1)), E.eq(E.f(0.1), x0)],
        [Pair.of(t, refArray([0, Math.fround(0.1)], [2]))],
      );
      await checkExprs(t, 'i32 const 3.7', [E.add(x0, E.i(3.7))], [Pair.of(t, refArray([1, 2], [2], 'int32'))]);
    }),
  ];
}

function fusedCases(): OpCase[] {
  // An Adam-style update: 3 outputs, 4 inputs, ~25 nodes, constants as parameters.
  const [p, g, m, v] = [E.in(0), E.in(1), E.in(2), E.in(3)];
  const b1 = E.f(0.9),
    b2 = E.f(0.999),
    lr = E.f(1e-3),
    eps = E.f(1e-8);
  const m2 = E.add(E.mul(b1, m), E.mul(E.sub(E.f(1), b1), g));
  const v2 = E.add(E.mul(b2, v), E.mul(E.sub(E.f(1), b2), E.mul(g, g)));
  const mh = E.div(m2, E.f(1 - 0.9 ** 3));
  const vh = E.div(v2, E.f(1 - 0.999 ** 3));
  const p2 = E.sub(p, E.div(E.mul(lr, mh), E.add(E.sqrt(vh), eps)));
  return [
    defineCase(
      'elementwise/multi-output adam update (one kernel, 3 outputs)',
      async (t) => {
        const ins = [
          randF32([7, 33], 71),
          randF32([7, 33], 72),
          randF32([7, 33], 73, -0.1, 0.1),
          randF32([7, 33], 74, 0, 0.1),
        ].map((r) => Pair.of(t, r));
        await checkExprs(t, 'adam', [p2, m2, v2], ins, TOL.fused);
      },
      { quick: true },
    ),
    defineCase(
      'elementwise/multi-output of different dtypes',
      async (t) => {
        const outs: Expr[] = [E.mul(x0, x0), E.lt(x0, E.f(0)), E.cast(x0, 'int32'), E.add(E.cast(x1, 'float32'), x0)];
        await checkExprs(
          t,
          'mixed',
          outs,
          [Pair.of(t, randF32([3, 7], 75, -9, 9)), Pair.of(t, randI32([7], 76, -5, 5))],
          TOL.f32,
        );
      },
      { quick: true },
    ),
    defineCase('elementwise/deep expression (softplus, tanh-like, gelu-like chain)', async (t) => {
      const softplus = E.log(E.add(E.f(1), E.exp(x0)));
      const e2 = E.exp(E.mul(E.f(-2), x0));
      const tanh = E.div(E.sub(E.f(1), e2), E.add(E.f(1), e2));
      const gelu = E.mul(E.mul(E.f(0.5), x0), E.add(E.f(1), E.sin(E.mul(x0, E.f(0.7)))));
      const deep = E.add(E.mul(softplus, tanh), E.div(gelu, E.add(E.f(2), E.mul(x1, x1))));
      await checkExprs(
        t,
        'deep',
        [deep],
        [Pair.of(t, randF32([65], 77, -3, 3)), Pair.of(t, randF32([65], 78, -2, 2))],
        TOL.fused,
      );
    }),
    defineCase('elementwise/same input used many times, inputs unused', async (t) => {
      const e = E.add(E.mul(x0, x0), E.mul(E.mul(x0, x0), x0));
      await checkExprs(
        t,
        'x^2+x^3 ignoring x1',
        [e],
        [Pair.of(t, randF32([3, 3], 79)), Pair.of(t, randF32([3, 3], 80))],
        TOL.f32,
      );
      await checkExprs(
        t,
        'reads only x1',
        [E.neg(x1)],
        [Pair.of(t, randF32([3, 3], 81)), Pair.of(t, randF32([3, 3], 82))],
      );
    }),
    defineCase(
      'elementwise/intermediates round to f32',
      async (t) => {
        // 1 + 2^-24 is 1 in f32 (ties to even) but not in f64: a backend computing in doubles
        // and rounding only at the store would disagree with the GPU on eq and on casts.
        const x = Pair.of(t, refArray([1, 1, 3], [3]));
        const y = Pair.of(t, refArray([2 ** -24, 3 * 2 ** -24, 2 ** -22], [3]));
        await checkExprs(t, 'eq(x+y, x)', [E.eq(E.add(x0, x1), x0)], [x, y]);
        // GPU compilers (NVIDIA's Vulkan driver) may reassociate inside one kernel and return
        // y: allow a few ulp of the operands' magnitude (1) there, and stay exact on the CPU.
        const reassoc: Tolerance = t.backend.name === 'cpu' ? TOL.exact : { rtol: 0, atol: 4 * 2 ** -23 };
        await checkExprs(t, '(x+y)-x', [E.sub(E.add(x0, x1), x0)], [x, y], reassoc);
        // Overflow in an intermediate: exp(100) is Inf in f32, so Inf*0 is NaN.
        await checkExprs(t, 'exp(100)*0', [E.mul(E.exp(E.f(100)), x0)], [Pair.of(t, refArray([0, 1], [2]))]);
      },
      { quick: true },
    ),
  ];
}

function shapeCases(): OpCase[] {
  return [
    defineCase(
      'elementwise/0-d inputs and 0-d broadcast',
      async (t) => {
        const s = Pair.of(t, refArray([2.5], []));
        await checkExprs(t, '0-d + 0-d', [E.add(x0, x1)], [s, Pair.of(t, refArray([-1], []))], TOL.f32);
        await checkExprs(t, '0-d * [3,4]', [E.mul(x0, x1)], [s, Pair.of(t, randF32([3, 4], 91))], TOL.f32);
        // A 0-d view at an offset into a bigger buffer.
        const v = Pair.of(t, iota([5]))
          .crop([[3, 4]])
          .reshape([]);
        await checkExprs(t, '0-d view at offset 3', [E.neg(x0)], [v]);
      },
      { quick: true },
    ),
    defineCase(
      'elementwise/size-0 shapes',
      async (t) => {
        await checkExprs(
          t,
          '[0,3]+[3]',
          [E.add(x0, x1)],
          [Pair.of(t, randF32([0, 3], 92)), Pair.of(t, randF32([3], 93))],
        );
        await checkExprs(
          t,
          '[3,1]+[0] -> [3,0]',
          [E.add(x0, x1)],
          [Pair.of(t, randF32([3, 1], 94)), Pair.of(t, randF32([0], 95))],
        );
        await checkExprs(t, 'i32 [2,0,4]', [E.neg(x0), E.lt(x0, E.i(0))], [Pair.of(t, randI32([2, 0, 4], 96, 0, 9))]);
      },
      { quick: true },
    ),
    defineCase('elementwise/5-d permuted, flipped, broadcast', async (t) => {
      const a = Pair.of(t, randF32([2, 3, 4, 3, 2], 97))
        .permute([4, 2, 0, 3, 1])
        .flip([1, 3]);
      const b = Pair.of(t, randF32([4, 1, 3, 1], 98));
      await checkExprs(t, '5-d', [E.add(E.mul(x0, x1), x0)], [a, b], TOL.f32);
    }),
    defineCase('elementwise/odd sizes 1, 3, 7, 33, 65, 257, 1031', async (t) => {
      for (const n of [1, 3, 7, 33, 65, 257, 1031]) {
        await checkExprs(
          t,
          `[${n}]`,
          [E.sub(E.mul(x0, x1), x1)],
          [Pair.of(t, randF32([n], n)), Pair.of(t, randF32([n], n + 1))],
          TOL.fused,
        );
      }
    }),
    defineCase(
      'elementwise/input masked away on a size-1 dim (pad of an empty slice)',
      async (t) => {
        // Collapsing drops size-1 dims; the emptiness of this one's mask must survive it.
        const gone = Pair.of(t, randF32([3, 5], 101))
          .crop([
            [0, 0],
            [0, 5],
          ])
          .pad([
            [1, 0],
            [0, 0],
          ]);
        await checkExprs(t, 'x + gone', [E.add(x1, x0)], [gone, Pair.of(t, randF32([1, 5], 102))], TOL.f32);
        await checkExprs(
          t,
          'x + gone expanded',
          [E.add(x1, x0)],
          [gone.expand([4, 5]), Pair.of(t, randF32([4, 5], 103))],
          TOL.f32,
        );
        await checkExprs(
          t,
          '0-d gone',
          [E.neg(x0)],
          [
            gone
              .crop([
                [0, 1],
                [2, 3],
              ])
              .reshape([]),
          ],
        );
      },
      { quick: true },
    ),
    defineCase('elementwise/large contiguous [129,257]', async (t) => {
      await checkExprs(
        t,
        'big',
        [E.add(E.mul(x0, E.f(2)), x1)],
        [Pair.of(t, randF32([129, 257], 99)), Pair.of(t, randF32([257], 100))],
        TOL.f32,
      );
    }),
  ];
}

export function elementwiseCases(): OpCase[] {
  return [...unaryCases(), ...binaryCases(), ...whereAndConstCases(), ...fusedCases(), ...shapeCases()];
}
