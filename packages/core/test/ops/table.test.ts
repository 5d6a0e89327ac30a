import {
  BINARY_OPS,
  BINARY_TABLE,
  E,
  Expr,
  OpRow,
  UNARY_OPS,
  UNARY_TABLE,
  collapseDims,
  deriveExpr,
  lowerViews,
} from '@surf/core';
import { refArray, refElementwise } from '@surf/core/testing';
import { erf, fmodFloor, imod, rint, sign } from '../../src/ops/scalar';
import { refErf, refIntRemainder, refRemainder, refRint, refSign } from '../../src/ops/ref-scalar';

// The kernels' scalar helpers and the references' own (independent) ones against published values, its derivative rules against
// finite differences of its own reference functions, and the shared view lowering.

// The CPU kernels' helpers (ops/scalar.ts) and the op table references' own (ops/ref-scalar.ts).
const HELPERS = [
  ['kernels', { erf, rint, fmodFloor, imod, sign }],
  ['reference', { erf: refErf, rint: refRint, fmodFloor: refRemainder, imod: refIntRemainder, sign: refSign }],
] as const;

test.each(HELPERS)('%s: erf matches published values (Abramowitz & Stegun table 7.1) to 1e-10', (_, { erf }) => {
  const table: [number, number][] = [
    [0, 0],
    [0.1, 0.1124629160182849],
    [0.5, 0.5204998778130465],
    [1, 0.8427007929497149],
    [1.5, 0.9661051464753108],
    [2, 0.9953222650189527],
    [3, 0.9999779095030014],
    [3.9, 0.9999999652077514],
  ];
  for (const [x, v] of table) {
    expect(Math.abs(erf(x) - v)).toBeLessThan(1e-10);
    expect(Math.abs(erf(-x) + v)).toBeLessThan(1e-10);
  }
  expect(erf(5)).toBe(1);
  expect(erf(-Infinity)).toBe(-1);
  expect(erf(NaN)).toBeNaN();
});

test.each(HELPERS)(
  '%s: round is half to even, remainder takes the divisor sign (PyTorch), sign(NaN) is 0',
  (_, { rint, fmodFloor, imod, sign }) => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 3].map(rint)).toEqual([0, 2, 2, -0, -2, -2, 2, -3, 3]);
    // torch.remainder(torch.tensor([-3., -2, -1, 1, 2, 3]), 2) = [1, 0, 1, 1, 0, 1]; with -1.5: [-0, -0.5, -1, -0.5, -1, -0]
    expect([-3, -2, -1, 1, 2, 3].map((a) => fmodFloor(a, 2))).toEqual([1, -0, 1, 1, 0, 1]);
    expect([-3, -2, -1, 1, 2, 3].map((a) => fmodFloor(a, -1.5))).toEqual([-0, -0.5, -1, -0.5, -1, 0]);
    expect(fmodFloor(1, 0)).toBeNaN();
    expect([-7, 7, -7, 7, 5, -2147483648].map((a, i) => imod(a, [3, -3, -3, 3, 0, -1][i]))).toEqual([
      2, -2, -1, 1, 0, 0,
    ]);
    expect([2, -0.5, 0, -0, NaN].map(sign)).toEqual([1, -1, 0, 0, 0]);
  },
);

/** Evaluates a gradient rule with the kit's f32 reference evaluator at one point. */
function ruleAt(row: OpRow, op: string, xs: number[], arity: number): (number | null)[] {
  const x = Array.from({ length: arity }, (_, i) => E.in(1 + i));
  const out = E.in(1 + arity);
  const fwd = row.ref(xs, 'float32');
  const rules = row.grad!(E.in(0), x, out);
  return rules.map((r: Expr | null) =>
    r === null
      ? null
      : refElementwise(
          [r],
          [1, ...xs, fwd].map((v) => refArray([v], [1])),
        )[0].data[0],
  );
}

test.each(
  [...UNARY_OPS, ...BINARY_OPS].filter(
    (op) => (UNARY_TABLE as Record<string, OpRow>)[op]?.grad ?? (BINARY_TABLE as Record<string, OpRow>)[op]?.grad,
  ),
)('%s: the derivative rule matches finite differences of the reference', (op) => {
  const unary = (UNARY_OPS as readonly string[]).includes(op);
  const row: OpRow = unary
    ? UNARY_TABLE[op as keyof typeof UNARY_TABLE]
    : BINARY_TABLE[op as keyof typeof BINARY_TABLE];
  const arity = unary ? 1 : 2;
  let s = 12345;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const h = 1e-3;
  for (let k = 0; k < 12; k++) {
    const xs = row.test.domain.map((d) => {
      // Off the grid: the rounding ops are flat between integers.
      const v = d.lo + (d.hi - d.lo) * (0.05 + 0.9 * rnd()) + (d.grid ? 0.13 : 0);
      return Math.fround(d.signed && rnd() < 0.5 ? -v : v);
    });
    const ana = ruleAt(row, op, xs, arity);
    for (let i = 0; i < arity; i++) {
      if (ana[i] === null) continue;
      const up = xs.slice(),
        dn = xs.slice();
      up[i] += h;
      dn[i] -= h;
      const mid = row.ref(xs, 'float32');
      const fwd = (row.ref(up, 'float32') - mid) / h,
        bwd = (mid - row.ref(dn, 'float32')) / h;
      // A jump between the samples (floor, mod wrapping around) is not a derivative.
      if (Math.abs(fwd - bwd) > 0.1 * (1 + Math.abs(fwd))) continue;
      const num = (fwd + bwd) / 2;
      expect([op, i, xs, Math.abs(num - ana[i]!) <= 1e-2 * (1 + Math.abs(num))]).toEqual([op, i, xs, true]);
    }
  }
});

test('every row names a test domain per operand for float ops', () => {
  for (const op of UNARY_OPS) expect([op, UNARY_TABLE[op].test.domain.length]).toEqual([op, 1]);
  for (const op of BINARY_OPS)
    if (BINARY_TABLE[op].dtypes !== 'integral') expect([op, BINARY_TABLE[op].test.domain.length]).toEqual([op, 2]);
});

test('the shared lowering collapses, keeps cut masks, and classifies reads', () => {
  // Contiguous [2,3,4] with a scalar broadcast: one flat dim.
  const a = lowerViews(
    [2, 3, 4],
    [
      { strides: [12, 4, 1], mask: null },
      { strides: [0, 0, 0], mask: null },
    ],
  );
  expect(a.shape).toEqual([24]);
  expect(a.ops.map((o) => [o.access, o.inner])).toEqual([
    ['c', 'u'],
    ['b', '0'],
  ]);
  // A bias [4] over [3,4] stays two dims; the transposed operand is strided.
  const b = lowerViews(
    [3, 4],
    [
      { strides: [0, 1], mask: null },
      { strides: [1, 3], mask: null },
    ],
  );
  expect(b.shape).toEqual([3, 4]);
  expect(b.ops.map((o) => o.access)).toEqual(['s', 's']);
  // A mask that cuts dim 1 blocks merging there; a full mask is dropped.
  const c = lowerViews(
    [2, 3, 4],
    [
      {
        strides: [12, 4, 1],
        mask: [
          [0, 2],
          [1, 3],
          [0, 4],
        ],
      },
      {
        strides: [12, 4, 1],
        mask: [
          [0, 2],
          [0, 3],
          [0, 4],
        ],
      },
    ],
  );
  expect(c.shape).toEqual([2, 3, 4]);
  expect(c.ops.map((o) => [o.access, o.mask])).toEqual([
    [
      'm',
      [
        [0, 2],
        [1, 3],
        [0, 4],
      ],
    ],
    ['c', null],
  ]);
  const z = lowerViews([5], [{ strides: [1], mask: [[3, 3]] }]);
  expect(z.ops[0].access).toBe('z');
  // Masked away on a size-1 dim that collapsing drops: still masked away, at any rank.
  expect(
    lowerViews(
      [1, 5],
      [
        {
          strides: [0, 1],
          mask: [
            [1, 1],
            [0, 5],
          ],
        },
      ],
    ).ops[0],
  ).toEqual({ access: 'z', inner: 'g', strides: [1], mask: [[0, 0]] });
  expect(lowerViews([1], [{ strides: [0], mask: [[1, 1]] }], 1).ops[0]).toEqual({
    access: 'z',
    inner: 'g',
    strides: [0],
    mask: [[0, 0]],
  });
  // All size-1: rank 0, or [1] when the generator wants a loop.
  expect(lowerViews([1, 1], [{ strides: [5, 7], mask: null }]).shape).toEqual([]);
  expect(lowerViews([], [{ strides: [], mask: null }], 1)).toEqual({
    shape: [1],
    ops: [{ access: 'b', inner: '0', strides: [0], mask: null }],
  });
  expect(collapseDims([4, 5], [{ strides: [-5, -1], mask: null }])).toEqual({
    shape: [20],
    ops: [{ strides: [-1], mask: null }],
  });
});

test('deriveExpr: composite gradients from the table match finite differences', () => {
  const [x, y] = [E.in(0), E.in(1)];
  const sig = E.div(E.where(E.lt(x, E.f(0)), E.exp(E.neg(E.abs(x))), E.f(1)), E.add(E.f(1), E.exp(E.neg(E.abs(x)))));
  const cases: [string, Expr, number[][]][] = [
    [
      'silu x·σ(x)',
      E.mul(x, sig),
      [
        [-3, 0],
        [-0.4, 0],
        [0.7, 0],
        [5, 0],
      ],
    ],
    [
      'x·sin(y) + y^2 / x',
      E.add(E.mul(x, E.sin(y)), E.div(E.mul(y, y), x)),
      [
        [1.3, -0.7],
        [-2, 2.1],
      ],
    ],
    [
      'clamp-like where, y only in the condition',
      E.where(E.lt(x, y), E.mul(x, E.f(3)), E.tanh(x)),
      [
        [0.2, 1],
        [1.5, 1],
      ],
    ],
    [
      'erf(x)·exp(y), floor contributes nothing',
      E.add(E.mul(E.erf(x), E.exp(y)), E.floor(x)),
      [
        [0.3, 0.2],
        [-1.2, -0.5],
      ],
    ],
    [
      'x used twice through a cast',
      E.mul(E.cast(x, 'float32'), E.log1p(E.mul(x, x))),
      [
        [0.5, 0],
        [-2, 0],
      ],
    ],
  ];
  const evalAt = (e: Expr, v: number[]) =>
    refElementwise(
      [e],
      v.map((a) => refArray([a], [1])),
    )[0].data[0];
  for (const [name, e, points] of cases) {
    const grads = deriveExpr(e, E.in(2)); // the upstream gradient is input 2
    for (const p of points) {
      for (let i = 0; i < 2; i++) {
        const h = 1e-3;
        const up = p.slice(),
          dn = p.slice();
        up[i] += h;
        dn[i] -= h;
        const num = (evalAt(e, up) - evalAt(e, dn)) / (2 * h);
        const rule = grads.get(i);
        const ana = rule ? evalAt(rule, [...p, 1]) : 0;
        expect([name, i, p, Math.abs(num - ana) <= 2e-3 * (1 + Math.abs(num))]).toEqual([name, i, p, true]);
      }
    }
  }
  // y feeds only a condition: no gradient at all; a constant expression: none either.
  expect(deriveExpr(cases[2][1], E.in(2)).has(1)).toBe(false);
  expect(deriveExpr(E.f(3), E.in(0)).size).toBe(0);
});
