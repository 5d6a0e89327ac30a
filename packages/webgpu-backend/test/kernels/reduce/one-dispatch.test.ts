import { E, NDArray } from '@surf/core';
import { expectClose, twin } from '../../cpu-compare';
import { gpuBackend, testGpu } from '../../gpu';

// Chunked float reductions finish in one dispatch: the last workgroup of each output folds
// the partials and resets the shared scratch. 64-thread workgroups and 2 vec4 loads per
// thread make small shapes chunk, so SwiftShader reaches the path; every reduction is
// checked against the CPU, repeated on one backend (the scratch must come back clean),
// and counted (one dispatch each).
testGpu('one-dispatch reductions: sum and max over chunks match the CPU, repeatedly, with NaN and -Inf', async () => {
  // The third backend caps the chunks at 4 (`oneGroups`), so each holds a longer run.
  for (const extra of [{}, { maxWorkgroupsPerDim: 3 }, { reduce: { onePerThread: 2, oneGroups: 4 } }]) {
    const b = await gpuBackend({ reduceWorkgroupSize: 64, reduce: { onePerThread: 2 }, ...extra });
    try {
      const cases: [number[], number[] | undefined][] = [
        [[5000], undefined],
        [[3, 4001], [1]],
        [
          [4, 2, 1500],
          [0, 2],
        ],
        [[7, 3000], undefined],
        [[6, 3000], [1]],
      ];
      let seed = 900;
      // The folded grid (spare workgroups must not count as arrivals) on two shapes only.
      const some =
        'maxWorkgroupsPerDim' in extra ? [cases[0], cases[4]] : 'reduce' in extra ? [cases[0], cases[3]] : cases;
      for (let round = 0; round < 2; round++) {
        for (const [shape, axes] of some) {
          const [xg, xc] = twin(b, shape, seed++);
          const abs = xc.map(E.max(E.in(0), E.neg(E.in(0)))).sum(axes);
          const scale = await abs.data();
          abs.dispose();
          for (const op of ['sum', 'max'] as const) {
            const before = b.stats().dispatches;
            const g = op === 'sum' ? xg.sum(axes) : xg.max(axes);
            expect(b.stats().dispatches - before).toBe(1);
            const c = op === 'sum' ? xc.sum(axes) : xc.max(axes);
            expectClose(
              await g.data(),
              await c.data(),
              op === 'sum' ? 1e-5 : 0,
              op === 'sum' ? 1e-6 : 0,
              `${op} [${shape}] over ${axes} round ${round}`,
              op === 'sum' ? scale : undefined,
            );
            g.dispose();
            c.dispose();
          }
          xg.dispose();
          xc.dispose();
        }
      }
      // A NaN in one chunk reaches the result of sum and max; -Inf everywhere gives -Inf.
      const n = 6000;
      const d = new Float32Array(n).fill(1);
      d[4321] = NaN;
      const x = NDArray.fromData(b, d, [2, n / 2]);
      const s = x.sum(1);
      const m = x.max(1);
      expect(Array.from(await s.data())).toEqual([n / 2, NaN]);
      expect(Array.from(await m.data())).toEqual([1, NaN]);
      const ninf = NDArray.fromData(b, new Float32Array(n).fill(-Infinity), [n]);
      const mi = ninf.max();
      expect(Array.from(await mi.data())).toEqual([-Infinity]);
      // And the scratch is clean afterwards.
      const ones = NDArray.fromData(b, new Float32Array(n).fill(1), [n]);
      const so = ones.sum();
      expect(Array.from(await so.data())).toEqual([n]);
      for (const a of [x, s, m, ninf, mi, ones, so]) a.dispose();
    } finally {
      b.destroy();
    }
  }
});
