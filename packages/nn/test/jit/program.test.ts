import { Tensor, collectGarbage, crossEntropy, jit, manualSeed, nn, optim, randn, randint } from '@surf/nn';
import { gpuBackend } from '../../../../test-support/gpu';
import { backends, ceStep, on, testGpu } from '../helpers';

// jit on WebGPU compiles a record into one program (webgpu-backend/src/replay/program.ts):
// each replay stages its dynamic values into the open batch's command stream, joins that batch
// (no submit of its own), and reuses the bind groups made at compile time. Checked against the eager loop on the same backend,
// with a cosine schedule, Adam and Dropout, whose learning rate, bias corrections and masks
// must change on every replay.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

interface Counts {
  submits: number;
  bindGroupsCreated: number;
  replays: number;
  dispatches: number;
}

async function train(
  jitted: boolean,
  steps: number,
): Promise<{ losses: number[]; params: Float32Array[]; counts: Counts[] }> {
  manualSeed(5);
  const model = new nn.Sequential(
    new nn.Linear(6, 8),
    new nn.ReLU(),
    new nn.Dropout(0.3),
    new nn.LayerNorm(8),
    new nn.Linear(8, 3),
  );
  const batches = Array.from({ length: steps }, () => ({ x: randn([4, 6]), y: randint(0, 3, [4]) }));
  const opt = new optim.Adam(model.parameters(), { lr: 0.05 });
  const sched = new optim.CosineAnnealingLR(opt, { tMax: steps });
  const step = (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  // Losses are read after later steps: kept (keepOutputs).
  const f = jitted ? jit(step, { keepOutputs: true }) : step;
  const backend = batches[0].x.ndarray.backend as unknown as { stats(): Counts };
  manualSeed(9);
  const counts: Counts[] = [];
  const losses: Tensor[] = [];
  for (const { x, y } of batches) {
    counts.push(backend.stats());
    losses.push(f(x, y));
    sched.step();
  }
  counts.push(backend.stats());
  const ls = await Promise.all(losses.map((l) => l.item()));
  const params = await Promise.all(model.parameters().map(async (p) => (await p.data()) as Float32Array));
  return { losses: ls, params, counts };
}

testGpu(
  'jit on WebGPU: replays run as one compiled program (one submit, no new bind groups) and still follow lr, Adam step and dropout',
  async () => {
    await on(B.gpu(), async () => {
      const steps = 7;
      const want = await train(false, steps);
      const got = await train(true, steps);
      const tol = 1e-5;
      got.losses.forEach((l, i) => {
        if (!(Math.abs(l - want.losses[i]) <= tol * (1 + Math.abs(want.losses[i]))))
          throw new Error(`step ${i}: loss ${l}, eager ${want.losses[i]}`);
      });
      got.params.forEach((p, i) =>
        p.forEach((v, j) => {
          const w = want.params[i][j];
          if (!(Math.abs(v - w) <= tol * (1 + Math.abs(w)))) throw new Error(`param ${i}[${j}]: ${v}, eager ${w}`);
        }),
      );
      // The first calls record (three here: Adam's first step makes its moments); the first
      // replay compiles the program (its bind groups are made then), later ones reuse it.
      const d = (i: number, k: keyof Counts) => got.counts[i + 1][k] - got.counts[i][k];
      const first = got.counts.findIndex((_, i) => i < steps && d(i, 'replays') === 1);
      expect(first).toBe(3);
      let submits = 0;
      for (let i = first + 1; i < steps; i++) {
        expect([d(i, 'replays'), d(i, 'bindGroupsCreated')]).toEqual([1, 0]);
        expect(d(i, 'dispatches')).toBe(d(first, 'dispatches'));
        submits += d(i, 'submits');
      }
      // Replays join the open batch: fewer submits than replays (one each before).
      expect(submits).toBeLessThan(steps - first - 1);
      // The eager loop did change per step (so matching it means the replays did too).
      expect(new Set(want.losses.map((l) => l.toFixed(6))).size).toBe(steps);
    });
  },
);

// With timestamps on, a compiled replay's own compute pass is timed like any other: the GPU
// time and pass count keep growing over replays (the program opens its pass through the
// runtime, which adds the timestamp writes).
testGpu('jit on a timed WebGPU backend: compiled replays report their GPU time', async () => {
  const timed = await gpuBackend({ timestamps: true });
  type Timed = { stats(): Counts & { gpuTimeMs?: number; timedPasses?: number }; sync(): Promise<void> };
  const be = timed as unknown as Timed;
  try {
    await on(timed, async () => {
      const s0 = be.stats();
      manualSeed(1);
      const lin = new nn.Linear(5, 2);
      const opt = new optim.SGD(lin.parameters(), { lr: 0.1 });
      const step = jit((x: Tensor) => {
        opt.zeroGrad();
        const o = lin.forward(x);
        const l = o.mul(o).mean();
        l.backward();
        opt.step();
        return l;
      });
      const x = randn([3, 5]);
      for (let i = 0; i < 4; i++) step(x).dispose();
      await be.sync();
      const s1 = be.stats();
      for (let i = 0; i < 4; i++) step(x).dispose();
      await be.sync();
      const s2 = be.stats();
      expect(s2.replays - s1.replays).toBe(4);
      expect(s2.timedPasses! - s1.timedPasses!).toBeGreaterThanOrEqual(4);
      expect(s2.gpuTimeMs!).toBeGreaterThan(s1.gpuTimeMs!);
      expect(s1.timedPasses!).toBeGreaterThan(s0.timedPasses!);
    });
  } finally {
    timed.destroy();
  }
});

// Kernels per replayed step (issue 12): the compiled replay merges the optimizer's
// per-parameter updates into one kernel per as many parameters as the adapter's storage
// bindings allow (three each for plain SGD). The count must not go back up.
testGpu('jit on WebGPU: the SGD step issues its four parameter updates as merged kernels', async () => {
  await on(B.gpu(), async () => {
    const be = B.gpu() as unknown as { stats(): Counts; limits: GPUSupportedLimits; sync(): Promise<void> };
    const perReplay = async (merge: boolean): Promise<{ n: number; params: Float32Array[] }> => {
      const prev = process.env.SURF_JIT_MERGE;
      process.env.SURF_JIT_MERGE = merge ? '1' : '0';
      try {
        manualSeed(2);
        const model = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
        const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
        const step = jit((x: Tensor, y: Tensor) => {
          opt.zeroGrad();
          const loss = crossEntropy(model.forward(x), y);
          loss.backward();
          opt.step();
          return loss;
        });
        const x = randn([4, 6]);
        const y = randint(0, 3, [4]);
        for (let i = 0; i < 4; i++) step(x, y).dispose();
        const s0 = be.stats().dispatches;
        step(x, y).dispose();
        const n = be.stats().dispatches - s0;
        return { n, params: await Promise.all(model.parameters().map(async (p) => (await p.data()) as Float32Array)) };
      } finally {
        if (prev === undefined) delete process.env.SURF_JIT_MERGE;
        else process.env.SURF_JIT_MERGE = prev;
      }
    };
    const plain = await perReplay(false);
    const merged = await perReplay(true);
    const chunks = Math.ceil(4 / Math.floor(be.limits.maxStorageBuffersPerShaderStage / 3));
    // 9 kernels before the updates: 2 matmuls, 2 for the loss (its rows with the index check
    // and their sum inside, its gradient), 2 bias-gradient sums, 3 gradient matmuls.
    expect(plain.n).toBe(13);
    expect(merged.n).toBe(9 + chunks);
    // The same arithmetic either way: bit-equal parameters.
    merged.params.forEach((p, i) => expect(Array.from(p)).toEqual(Array.from(plain.params[i])));
  });
});

// Results the step only writes (gradients after zeroGrad) are lent to their tensors: the
// program writes p.grad's buffer in place instead of copying into it after every run. What
// users see must not change: each p.grad equals the eager loop's after every step, also when
// the grads are freed between steps (zeroGrad outside the step: the next replay gives each a
// new tensor over the lent buffer), and memory stays flat. The class-index upload of the loss
// is copied on the first runs only, and a learning rate staged once until it changes; the
// loss values check both.
testGpu('jit on WebGPU: gradients are lent to p.grad and stay right when freed between steps', async () => {
  await on(B.gpu(), async () => {
    const be = B.gpu();
    const run = async (jitted: boolean, freeOutside: boolean) => {
      manualSeed(3);
      const model = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
      const opt = new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
      const body = ceStep(model, opt);
      const f = jitted ? jit(body) : body;
      manualSeed(4);
      const batches = Array.from({ length: 3 }, () => ({ x: randn([5, 6]), y: randint(0, 3, [5]) }));
      const losses: number[] = [];
      const grads: number[][][] = [];
      const bytes: number[] = [];
      for (let i = 0; i < 12; i++) {
        // Freed after the program exists (it compiles at the first replay, with grads live).
        if (freeOutside && i >= 6 && i % 2 === 0) opt.zeroGrad();
        // A learning rate that holds for a while, then changes: the replay must pick it up.
        if (i === 8) opt.paramGroups[0].lr = 0.03;
        const { x, y } = batches[i % 3];
        const l = f(x, y);
        losses.push(await l.item());
        l.dispose();
        grads.push(
          await Promise.all(model.parameters().map(async (p) => Array.from((await p.grad!.data()) as Float32Array))),
        );
        // The eager run's and the recording calls' garbage goes first (an automatic collection
        // at an await could free it mid-loop).
        if (jitted) await collectGarbage(be);
        bytes.push(be.memory().bytes);
      }
      return { losses, grads, bytes };
    };
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-5 * (1 + Math.abs(b));
    for (const freeOutside of [false, true]) {
      const want = await run(false, freeOutside);
      const got = await run(true, freeOutside);
      got.losses.forEach((l, i) => {
        if (!close(l, want.losses[i]))
          throw new Error(`free ${freeOutside}, step ${i}: loss ${l}, eager ${want.losses[i]}`);
      });
      got.grads.forEach((ps, i) =>
        ps.forEach((g, k) =>
          g.forEach((v, j) => {
            if (!close(v, want.grads[i][k][j]))
              throw new Error(`free ${freeOutside}, step ${i}: grad ${k}[${j}] ${v}, eager ${want.grads[i][k][j]}`);
          }),
        ),
      );
      // Replays from the fifth step on: the live bytes (program and tensors) stay put (the
      // eager loop without tidy leaves its garbage to the collector: not compared).
      expect(new Set(got.bytes.slice(5)).size).toBe(1);
    }
  });
});
