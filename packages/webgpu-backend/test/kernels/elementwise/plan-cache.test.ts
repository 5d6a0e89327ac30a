import { Backend, E, Expr, NDArray, randomArray } from '@surf/core';
import { cpu, expectClose } from '../../cpu-compare';
import { gpuBackend, testGpu } from '../../gpu';

// The elementwise plan cache (kernels/elementwise/plan-cache.ts) replays a dispatch's parameter
// block for a repeated signature. One Expr object is run here over inputs that differ in
// exactly one thing the plan depends on (dtype, shape, strides, mask, aliasing, offset
// alignment, offsets, constants), twice over in two orders so that every case meets a cached
// plan of a neighbouring signature; every result must equal the CPU backend's.
testGpu('a cached elementwise plan is reused only for its own signature', async () => {
  const gpu = await gpuBackend();
  try {
    const n = 300;
    const fa = randomArray('uniform', n + 16, 41, -3, 3);
    const fb = randomArray('uniform', n + 16, 42, -3, 3);
    const ia = Int32Array.from(randomArray('uniform', n, 43, -40, 40), Math.trunc);
    const ib = Int32Array.from(randomArray('uniform', n, 44, -40, 40), Math.trunc);
    const f: Expr = E.add(E.mul(E.in(0), E.in(1)), E.in(0));
    const withConst = (c: number): Expr => E.sub(E.mul(E.in(0), E.f(c)), E.in(1));

    type Case = [string, (be: Backend) => NDArray[]];
    const cases: Case[] = [];
    const on = (be: Backend) => {
      const A = NDArray.fromData(be, fa, [n + 16]);
      const B = NDArray.fromData(be, fb, [n + 16]);
      return { A, B, a: A.crop([[0, n]]), b: B.crop([[0, n]]) };
    };
    // First, so that the longer call of the same strides meets a plan for fewer elements.
    cases.push([
      'shorter',
      (be) => {
        const { A, B } = on(be);
        return [A.crop([[0, 200]]).map(f, B.crop([[0, 200]]))];
      },
    ]);
    cases.push([
      'float32 contiguous',
      (be) => {
        const { a, b } = on(be);
        return [a.map(f, b)];
      },
    ]);
    cases.push([
      'int32 inputs',
      (be) => {
        const x = NDArray.fromData(be, ia, [n]);
        return [x.map(f, NDArray.fromData(be, ib, [n]))];
      },
    ]);
    cases.push([
      'another shape',
      (be) => {
        const { a, b } = on(be);
        return [a.reshape([20, 15]).map(f, b.reshape([20, 15]))];
      },
    ]);
    cases.push([
      'one buffer read twice',
      (be) => {
        const { a } = on(be);
        return [a.map(f, a)];
      },
    ]);
    cases.push([
      'one buffer at two offsets',
      (be) => {
        const { A } = on(be);
        return [A.crop([[0, n]]).map(f, A.crop([[1, n + 1]]))];
      },
    ]);
    cases.push([
      'one buffer, aligned offsets',
      (be) => {
        const { A } = on(be);
        return [A.crop([[4, n + 4]]).map(f, A.crop([[8, n + 8]]))];
      },
    ]);
    cases.push([
      'two buffers, aligned offsets',
      (be) => {
        const { A, B } = on(be);
        return [A.crop([[4, n + 4]]).map(f, B.crop([[8, n + 8]]))];
      },
    ]);
    cases.push([
      'two buffers, other aligned offsets',
      (be) => {
        const { A, B } = on(be);
        return [A.crop([[12, n + 12]]).map(f, B.crop([[0, n]]))];
      },
    ]);
    cases.push([
      'two buffers, unaligned offset',
      (be) => {
        const { A, B } = on(be);
        return [A.crop([[13, n + 13]]).map(f, B.crop([[0, n]]))];
      },
    ]);
    cases.push([
      'transposed',
      (be) => {
        const { a, b } = on(be);
        return [
          a
            .reshape([20, 15])
            .permute([1, 0])
            .map(f, b.reshape([15, 20])),
        ];
      },
    ]);
    cases.push([
      'broadcast row',
      (be) => {
        const { a, B } = on(be);
        return [a.reshape([20, 15]).map(f, B.crop([[0, 15]]).expand([20, 15]))];
      },
    ]);
    cases.push([
      'padded',
      (be) => {
        const { a, b } = on(be);
        return [
          a
            .crop([[0, n - 5]])
            .pad([[2, 3]])
            .map(f, b),
        ];
      },
    ]);
    cases.push([
      'padded elsewhere',
      (be) => {
        const { a, b } = on(be);
        return [
          a
            .crop([[0, n - 5]])
            .pad([[4, 1]])
            .map(f, b),
        ];
      },
    ]);
    // Structurally equal expressions (distinct objects) with different constants.
    cases.push([
      'constant 1.5',
      (be) => {
        const { a, b } = on(be);
        return [a.map(withConst(1.5), b)];
      },
    ]);
    cases.push([
      'constant -2',
      (be) => {
        const { a, b } = on(be);
        return [a.map(withConst(-2), b)];
      },
    ]);
    cases.push([
      'two outputs',
      (be) => {
        const { a, b } = on(be);
        return NDArray.elementwise([withConst(0.25), f], [a, b]);
      },
    ]);
    cases.push([
      'two outputs, other constant',
      (be) => {
        const { a, b } = on(be);
        return NDArray.elementwise([withConst(4), f], [a, b]);
      },
    ]);

    const want = new Map<string, ArrayLike<number>[]>();
    for (const [name, run] of cases) want.set(name, await Promise.all(run(cpu).map((x) => x.data())));
    for (const order of [cases, [...cases].reverse(), cases]) {
      for (const [name, run] of order) {
        const outs = run(gpu);
        const got = await Promise.all(outs.map((x) => x.data()));
        got.forEach((g, o) =>
          expectClose(g as Float32Array, want.get(name)![o] as Float32Array, 1e-6, 1e-6, `${name}, output ${o}`),
        );
      }
    }
  } finally {
    gpu.destroy();
  }
});
