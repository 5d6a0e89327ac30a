import { E, ElementwiseGroup, Expr, NDArray, randomArray } from '@surf/core';
import { cpu, expectClose } from '../../cpu-compare';
import { gpuBackend, testGpu } from '../../gpu';

// Backend.elementwiseGroups (jit merges an optimizer's per-parameter updates into it) against
// the CPU's elementwise, group by group: an SGD-momentum-like two-output update over sizes
// that do (vec4) and do not take four elements per thread, a view at an offset, an int32
// group, a strided group (not merged: it goes through elementwise), more groups than the
// storage bindings of one kernel allow, and per-group constants.
testGpu(
  'elementwiseGroups = elementwise per group (CPU reference), in as few dispatches as the bindings allow',
  async () => {
    const gpu = await gpuBackend();
    try {
      const sizes = [1000, 7, 128, 10, 64, 3, 96];
      const upd = (lr: number): Expr[] => {
        const g = E.add(E.in(1), E.mul(E.f(1e-3), E.in(0)));
        const buf = E.add(E.mul(E.f(0.9), E.in(2)), g);
        return [E.sub(E.in(0), E.mul(E.f(lr), buf)), buf];
      };
      const make = (be: typeof cpu | typeof gpu) => {
        const groups: ElementwiseGroup[] = sizes.map((n, k) => {
          const xs = [0, 1, 2].map((j) =>
            NDArray.fromData(be, randomArray('uniform', n + 5, 100 * k + j, -2, 2), [n + 5]),
          );
          // Group 2 reads its parameter at offset 5 (scalar path), the others at offset 4 or 0.
          const views = xs.map((x) => x.crop([[k === 2 ? 5 : k % 2 ? 4 : 0, (k === 2 ? 5 : k % 2 ? 4 : 0) + n]]));
          return {
            outs: upd(0.1 * (k + 1)),
            inputs: views.map((v) => ({ storage: v.storage, view: v.view })),
            shape: [n],
          };
        });
        const ia = NDArray.fromData(be, Int32Array.from(randomArray('uniform', 40, 7, -50, 50), Math.trunc), [40]);
        groups.push({ outs: [E.mul(E.in(0), E.i(3))], inputs: [{ storage: ia.storage, view: ia.view }], shape: [40] });
        const m = NDArray.fromData(be, randomArray('uniform', 6 * 5, 8, -2, 2), [6, 5]).permute([1, 0]);
        groups.push({ outs: [E.exp(E.in(0))], inputs: [{ storage: m.storage, view: m.view }], shape: [5, 6] });
        return groups;
      };
      const want = make(cpu).map((g) => cpu.elementwise(g.outs, g.inputs, g.shape));
      const groups = make(gpu);
      const d0 = gpu.stats().dispatches;
      const got = gpu.elementwiseGroups(groups);
      const dispatches = gpu.stats().dispatches - d0;
      // Seven five-binding updates: floor(limit / 5) per kernel; one int32 group; one strided.
      const per = Math.floor(gpu.limits.maxStorageBuffersPerShaderStage / 5);
      expect(dispatches).toBe(Math.ceil(sizes.length / per) + 1 + 1);
      expect(got.map((r) => r.length)).toEqual(want.map((r) => r.length));
      for (let k = 0; k < want.length; k++) {
        for (let o = 0; o < want[k].length; o++) {
          const g = await gpu.read(got[k][o]);
          const w = await cpu.read(want[k][o]);
          expectClose(g, w, 1e-6, 1e-6, `group ${k} output ${o}`);
        }
      }
    } finally {
      gpu.destroy();
    }
  },
);

// clipGradNorm's scale: every group reads its own gradient and one shared norm broadcast to its
// shape (strides 0); sizes with and without vec4, a norm at an offset, and a group whose scalar
// comes from the buffer of its own dense input (read both ways: the scalar layout).
testGpu('elementwiseGroups: broadcast scalar inputs are merged and read as one element', async () => {
  const gpu = await gpuBackend();
  try {
    const sizes = [1000, 7, 128, 10, 64];
    const scale = E.mul(E.in(0), E.div(E.f(2), E.add(E.in(1), E.f(1e-6))));
    const make = (be: typeof cpu | typeof gpu) => {
      const norms = NDArray.fromData(be, Float32Array.from([9, 13.5, 4]), [3]);
      const norm = norms.crop([[1, 2]]).reshape([]);
      const groups: ElementwiseGroup[] = sizes.map((n, k) => {
        const g = NDArray.fromData(be, randomArray('uniform', n, 300 + k, -2, 2), [n]);
        const nb = norm.expand([n]);
        return {
          outs: [scale],
          inputs: [
            { storage: g.storage, view: g.view },
            { storage: nb.storage, view: nb.view },
          ],
          shape: [n],
        };
      });
      const self = NDArray.fromData(be, randomArray('uniform', 8, 400, 1, 2), [8]);
      const first = self
        .crop([[3, 4]])
        .reshape([])
        .expand([8]);
      groups.push({
        outs: [scale],
        inputs: [
          { storage: self.storage, view: self.view },
          { storage: first.storage, view: first.view },
        ],
        shape: [8],
      });
      return groups;
    };
    const want = make(cpu).map((g) => cpu.elementwise(g.outs, g.inputs, g.shape));
    const groups = make(gpu);
    const d0 = gpu.stats().dispatches;
    const got = gpu.elementwiseGroups(groups);
    // Three bindings a group (gradient, norm, output): floor(limit / 3) groups per kernel.
    expect(gpu.stats().dispatches - d0).toBe(
      Math.ceil(groups.length / Math.floor(gpu.limits.maxStorageBuffersPerShaderStage / 3)),
    );
    for (let k = 0; k < want.length; k++)
      expectClose(await gpu.read(got[k][0]), await cpu.read(want[k][0]), 1e-6, 1e-6, `group ${k}`);
  } finally {
    gpu.destroy();
  }
});
