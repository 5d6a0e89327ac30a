import { E, NDArray, randomArray } from '@surf/core';
import { cpu, expectClose } from '../../cpu-compare';
import { gpuBackend, testGpu } from '../../gpu';

// The vec4 elementwise path (four elements per thread) against the scalar path and the CPU:
// float, int and bool inputs and outputs, a broadcast scalar, views at offsets that are and
// are not multiples of 4, and two outputs from one kernel.
testGpu(
  'vec4 and transposed-tile elementwise kernels agree bit for bit with the scalar path and with the CPU',
  async () => {
    const vec = await gpuBackend();
    const scalar = await gpuBackend({ elementwiseFastPaths: false });
    try {
      const n = 4 * 129;
      const fa = randomArray('uniform', n + 8, 31, -3, 3);
      const fb = randomArray('uniform', n + 8, 32, -3, 3);
      const ta = randomArray('uniform', 2600, 34, -3, 3);
      const tb = randomArray('uniform', 2600, 35, -3, 3);
      const ia = Int32Array.from(randomArray('uniform', n, 33, -50, 50), Math.trunc);
      const run = async (be: typeof cpu | typeof vec) => {
        const A = NDArray.fromData(be, fa, [n + 8]);
        const B = NDArray.fromData(be, fb, [n + 8]);
        const I = NDArray.fromData(be, ia, [n]);
        const s = NDArray.fromData(be, new Float32Array([0.5]), [1]).expand([n]);
        // Views at offset 4 (vec4-aligned) and offset 3 (the scalar path), both [n].
        const a4 = A.crop([[4, 4 + n]]);
        const b3 = B.crop([[3, 3 + n]]);
        const outs: NDArray[] = [];
        const own: NDArray[] = [];
        outs.push(
          ...NDArray.elementwise(
            [E.add(E.mul(E.in(0), E.in(1)), E.in(2)), E.lt(E.in(1), E.in(0))],
            [a4, a4.map(E.sin(E.in(0))), s],
          ),
        );
        outs.push(NDArray.elementwise([E.add(E.in(0), E.cast(E.in(1), 'float32'))], [b3, I])[0]);
        outs.push(I.map(E.mul(E.in(0), E.i(3))));
        outs.push(outs[1].map(E.where(E.in(0), E.f(1), E.f(-1))));
        // Transposed views through the workgroup tile: [37, 70]ᵀ and a 3-d permute whose dims
        // collapse to [R, C], edges not multiples of 32, with a bool output.
        const T = NDArray.fromData(be, ta.subarray(0, 37 * 70), [37, 70]);
        const U = NDArray.fromData(be, tb.subarray(0, 70 * 37), [70, 37]);
        const tT = T.permute([1, 0]);
        const k = NDArray.fromData(be, new Float32Array([0.25]), [1, 1]);
        outs.push(
          ...NDArray.elementwise(
            [E.add(E.mul(E.in(0), E.in(1)), E.in(2)), E.lt(E.in(0), E.in(1))],
            [tT, U, k.expand([70, 37])],
          ),
        );
        const P = NDArray.fromData(be, ta.subarray(0, 4 * 9 * 40), [4, 9, 40]);
        const Q = NDArray.fromData(be, tb.subarray(0, 40 * 4 * 9), [40, 4, 9]);
        outs.push(P.permute([2, 0, 1]).map(E.sub(E.in(0), E.in(1)), Q));
        own.push(T, U, tT, k, P, Q);
        const res: ArrayLike<number>[] = [];
        for (const o of outs) res.push(await o.data());
        for (const x of [A, B, I, s, a4, b3, ...own, ...outs]) x.dispose();
        return res;
      };
      const rv = await run(vec);
      const rs = await run(scalar);
      const rc = await run(cpu);
      rv.forEach((v, i) => {
        expect(Array.from(v)).toEqual(Array.from(rs[i]));
        expectClose(v as Float32Array, rc[i] as Float32Array, 1e-6, 1e-6, `output ${i}`);
      });
    } finally {
      vec.destroy();
      scalar.destroy();
    }
  },
);
