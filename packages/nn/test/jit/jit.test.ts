import { Backend, E, View } from '@surf/core';
import {
  JitError,
  Tensor,
  collectGarbage,
  crossEntropy,
  jit,
  manualSeed,
  nn,
  optim,
  randn,
  randint,
  tensor,
} from '@surf/nn';
import { backends, ceStep, on, testGpu } from '../helpers';

// jit against the eager loop it captures: the same losses and parameters, step by step, on
// the CPU (bit-exact: the replay issues the very same kernels) and on WebGPU.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

type OptKind = 'sgd' | 'adam' | 'rmsprop' | 'adagrad' | 'amsgrad';

interface Run {
  losses: number[];
  params: Float32Array[];
  /** The backend's live buffers after each step. */
  buffers: number[];
}

/** N training steps of a small MLP (optionally jitted); batches fixed up front. */
async function train(
  kind: OptKind,
  jitted: boolean,
  steps: number,
  opts: { dropout?: boolean; lastBatch?: number; epochLast?: number } = {},
): Promise<Run> {
  manualSeed(3);
  const layers: nn.Module[] = [new nn.Linear(6, 8), new nn.ReLU()];
  if (opts.dropout) layers.push(new nn.Dropout(0.25));
  layers.push(new nn.LayerNorm(8), new nn.Linear(8, 4));
  const model = new nn.Sequential(...layers);
  const batches = Array.from({ length: steps }, (_, i) => {
    // epochLast: epochs of 4 batches whose last is smaller (a loader without dropLast).
    const n = opts.lastBatch && i === steps - 1 ? opts.lastBatch : opts.epochLast && i % 4 === 3 ? opts.epochLast : 5;
    return { x: randn([n, 6]), y: randint(0, 4, [n]) };
  });
  const ps = model.parameters();
  const opt =
    kind === 'sgd'
      ? new optim.SGD(ps, { lr: 0.1, momentum: 0.9, weightDecay: 1e-3 })
      : kind === 'rmsprop'
        ? new optim.RMSprop(ps, { lr: 0.01, centered: true, momentum: 0.5 })
        : kind === 'adagrad'
          ? new optim.Adagrad(ps, { lr: 0.1, lrDecay: 0.01 })
          : new optim.Adam(ps, { lr: 0.01, amsgrad: kind === 'amsgrad' });
  const sched =
    kind === 'adam'
      ? new optim.CosineAnnealingLR(opt, { tMax: steps })
      : new optim.StepLR(opt, { stepSize: 2, gamma: 0.5 });
  const step = (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    optim.clipGradNorm(model.parameters(), 0.5);
    opt.step();
    return loss;
  };
  const f = jitted ? jit(step) : step;
  // Dropout draws from the global seed: reseed so both runs draw the same masks.
  manualSeed(11);
  const losses: number[] = [];
  const buffers: number[] = [];
  for (const { x, y } of batches) {
    const loss = f(x, y);
    sched.step();
    losses.push(await loss.item());
    loss.dispose();
    buffers.push(batches[0].x.ndarray.backend.memory().buffers);
  }
  if (jitted) expect((f as ReturnType<typeof jit>).stats.replayed).toBeGreaterThan(0);
  const params = await Promise.all(model.parameters().map(async (p) => (await p.data()) as Float32Array));
  return { losses, params, buffers };
}

function near(got: Run, want: Run, tol: number): void {
  expect(got.losses.length).toBe(want.losses.length);
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
}

async function matchesEager(
  backend: Backend,
  kind: OptKind,
  tol: number,
  opts: { dropout?: boolean; lastBatch?: number; epochLast?: number; steps?: number } = {},
): Promise<void> {
  await on(backend, async () => {
    const want = await train(kind, false, opts.steps ?? 7, opts);
    const got = await train(kind, true, opts.steps ?? 7, opts);
    near(got, want, tol);
    // Replays (from the fourth call) leave no buffers behind: the live count never rises
    // again (it may fall, when V8 happens to collect what the eager run dropped).
    if (!opts.lastBatch && !opts.epochLast) expect(Math.max(...got.buffers.slice(3))).toBe(got.buffers[3]);
  });
}

test('jit: MLP step with SGD momentum, StepLR, clipGradNorm = eager, bit-exact on the CPU', () =>
  matchesEager(B.cpu, 'sgd', 0));
test('jit: MLP step with Adam, cosine schedule = eager, bit-exact on the CPU', () => matchesEager(B.cpu, 'adam', 0));
test('jit: RMSprop (centered, momentum), Adagrad (lrDecay), AMSGrad with StepLR = eager, bit-exact on the CPU', async () => {
  for (const kind of ['rmsprop', 'adagrad', 'amsgrad'] as const) await matchesEager(B.cpu, kind, 0, { steps: 5 });
});
test('jit: dropout masks are fresh per call and follow manualSeed (= eager on the CPU)', () =>
  matchesEager(B.cpu, 'adam', 0, { dropout: true }));
test('jit: a smaller last batch records again', () => matchesEager(B.cpu, 'sgd', 0, { lastBatch: 3 }));
test('jit: a smaller last batch every epoch (two signatures taking turns) = eager', async () => {
  await matchesEager(B.cpu, 'sgd', 0, { epochLast: 3, steps: 16 });
  await matchesEager(B.cpu, 'adam', 0, { epochLast: 2, steps: 12 });
});

// One configuration on SwiftShader (slow): Adam's dynamic scalars, dropout, clipping.
testGpu('jit: MLP step with dropout, Adam, cosine schedule, clipGradNorm = eager on WebGPU', () =>
  matchesEager(B.gpu(), 'adam', 1e-5, { dropout: true, steps: 5 }),
);

test('jit: a readback inside the function is a JitError naming it', async () => {
  await on(B.cpu, async () => {
    const f = jit(async (x: Tensor) => {
      const v = await x.sum().item();
      return x.mul(v);
    });
    expect(() => f(tensor([1, 2]))).toThrow(JitError);
    expect(() => f(tensor([1, 2]))).toThrow(/readback/);
  });
});

/** A tiny regression model with SGD, as a jitted step; returns the step and the model. */
function tinyStep() {
  const model = new nn.Linear(3, 2);
  const opt = new optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.5 });
  const step = jit(
    (x: Tensor, t: Tensor) => {
      opt.zeroGrad();
      const loss = model.forward(x).sub(t).pow(2).mean();
      loss.backward();
      opt.step();
      return loss;
    },
    { maxRecords: 2 },
  );
  return { model, opt, step };
}

async function memoryFlat(backend: Backend, steps: number): Promise<void> {
  await on(backend, async () => {
    manualSeed(1);
    const { step } = tinyStep();
    const x = randn([4, 3]);
    const t = randn([4, 2]);
    const counts: number[] = [];
    for (let i = 0; i < steps; i++) {
      const loss = step(x, t);
      if (i % 10 === 9) {
        await loss.item();
        counts.push(backend.memory().buffers);
      }
      loss.dispose();
    }
    expect(step.stats.replayed).toBe(steps - 3);
    expect(new Set(counts.slice(1)).size).toBe(1);
  });
}

test('jit: memory stays flat over 50 replays without tidy (CPU)', () => memoryFlat(B.cpu, 60));

test('jit: records are per signature and bounded (LRU); a changed number argument records again', async () => {
  await on(B.cpu, async () => {
    manualSeed(2);
    const w = randn([3]);
    const f = jit((x: Tensor, k: number) => x.mul(w).sum().mul(k), { maxRecords: 2 });
    const want = async (x: Tensor, k: number) => (await x.mul(w).sum().item()) * k;
    for (const n of [2, 3, 4, 2, 3]) {
      for (let i = 0; i < 8; i++) {
        const x = randn([n, 3]);
        const k = i < 4 ? 1 : 2;
        const got = await f(x, k).item();
        expect(got).toBeCloseTo(await want(x, k), 5);
      }
    }
    expect(f.stats.signatures).toBe(2);
    expect(f.stats.replayed).toBeGreaterThan(0);
  });
});

test('jit: a parameter replaced between calls is seen (the record is made again)', async () => {
  await on(B.cpu, async () => {
    manualSeed(4);
    const model = new nn.Linear(3, 1);
    const f = jit((x: Tensor) => {
      const y = model.forward(x);
      const l = y.sum();
      l.backward();
      model.weight.grad = null;
      model.bias!.grad = null;
      return y;
    });
    const x = randn([2, 3]);
    for (let i = 0; i < 4; i++) f(x).dispose();
    model.weight.assign(tensor([[1, 2, 3]]));
    const got = (await f(x).data()) as Float32Array;
    const xs = (await x.data()) as Float32Array;
    const b = await model.bias!.item();
    for (let r = 0; r < 2; r++) expect(got[r]).toBeCloseTo(xs[3 * r] + 2 * xs[3 * r + 1] + 3 * xs[3 * r + 2] + b, 5);
  });
});

test('jit: work that differs on every call is a JitError', async () => {
  await on(B.cpu, async () => {
    let n = 0;
    const f = jit((x: Tensor) => {
      let y = x;
      for (let i = 0; i <= n; i++) y = y.exp();
      n++;
      return y;
    });
    const x = tensor([0.1, 0.2]);
    expect(() => {
      for (let i = 0; i < 6; i++) f(x);
    }).toThrow(/different work/);
  });
});

test('jit: bad arguments are clear errors', () => {
  expect(() => jit(3 as unknown as () => Tensor)).toThrow(/expected a function/);
  expect(() => jit(() => tensor([1]), { maxRecords: 0 })).toThrow(/maxRecords/);
  const p = tensor([1, 2], { requiresGrad: true });
  expect(() => jit((x: Tensor) => x.mul(2))(p)).toThrow(/requires grad/);
});

test('jit: a jitted function called inside another one is part of its record', async () => {
  await on(B.cpu, async () => {
    manualSeed(5);
    const inner = jit((x: Tensor) => x.mul(2).exp());
    const outer = jit((x: Tensor) => inner(x).add(randn([2])));
    manualSeed(6);
    const xs = [randn([2]), randn([2]), randn([2]), randn([2]), randn([2])];
    const want: number[][] = [];
    manualSeed(9);
    for (const x of xs)
      want.push(
        Array.from(
          await x
            .mul(2)
            .exp()
            .add(randn([2]))
            .data(),
        ),
      );
    manualSeed(9);
    for (const [i, x] of xs.entries()) expect(Array.from(await outer(x).data())).toEqual(want[i]);
    expect(outer.stats.replayed).toBe(3);
  });
});

test('jit: gradients zeroed outside the function are set again by each replay', async () => {
  await on(B.cpu, async () => {
    const run = async (jitted: boolean) => {
      manualSeed(8);
      const model = new nn.Linear(3, 2);
      const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
      const body = (x: Tensor) => {
        const loss = model.forward(x).pow(2).sum();
        loss.backward();
        opt.step();
        return loss;
      };
      const f = jitted ? jit(body) : body;
      const grads: number[][] = [];
      for (let i = 0; i < 5; i++) {
        f(randn([4, 3])).dispose();
        grads.push(Array.from(await model.weight.grad!.data()));
        opt.zeroGrad();
      }
      return grads;
    };
    expect(await run(true)).toEqual(await run(false));
  });
});

test('jit: a number argument that changes on every call warns once', async () => {
  await on(B.cpu, async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const f = jit((x: Tensor, k: number) => x.mul(k), { maxRecords: 2 });
      const x = tensor([1, 2]);
      for (let i = 0; i < 6; i++) expect(Array.from(await f(x, i).data())).toEqual([i, 2 * i]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/0-d tensor/);
    } finally {
      warn.mockRestore();
    }
  });
});

async function adoptMovesData(b: Backend): Promise<void> {
  const dst = b.fromData(new Float32Array([1, 2, 3]), 'float32');
  const src = b.fromData(new Float32Array([4, 5, 6]), 'float32');
  const before = b.memory();
  expect(b.adopt!(dst, src)).toBe(true);
  expect(Array.from(await b.read(dst))).toEqual([4, 5, 6]);
  expect(b.memory().buffers).toBe(before.buffers - 1);
  expect(b.memory().bytes).toBeLessThan(before.bytes);
  // A freed destination: the source is freed too, and the call says so.
  const src2 = b.fromData(new Float32Array([7, 8, 9]), 'float32');
  b.dispose(dst);
  expect(b.adopt!(dst, src2)).toBe(false);
  expect(b.memory().buffers).toBe(before.buffers - 2);
  const other = b.fromData(new Int32Array([1, 2, 3]), 'int32');
  const dst3 = b.fromData(new Float32Array([1, 2, 3]), 'float32');
  expect(() => b.adopt!(dst3, other)).toThrow(/differ/);
  [other, dst3].forEach((s) => b.dispose(s));
}

test('Backend.adopt moves a buffer into a storage (CPU)', () => adoptMovesData(B.cpu));
testGpu('Backend.adopt moves a buffer into a storage (WebGPU)', () => adoptMovesData(B.gpu()));

// Dropout 0 runs the fused attention contract op (attention/attentionBackward, whose results
// are objects of storages); dropout 0.2 the composite formula with its random masks.
test.each([0.2, 0])(
  'jit: an attention block step (MultiheadAttention with dropout %p, GELU, AdamW) = eager on the CPU, bit-exact',
  async (dropout) => {
    await on(B.cpu, async () => {
      const run = async (jitted: boolean) => {
        manualSeed(12);
        const attn = new nn.MultiheadAttention(8, 2, { dropout, batchFirst: true });
        const ff = new nn.Sequential(new nn.LayerNorm(8), new nn.Linear(8, 8), new nn.GELU());
        const params = [...attn.parameters(), ...ff.parameters()];
        const opt = new optim.AdamW(params, { lr: 0.01 });
        const body = (x: Tensor) => {
          opt.zeroGrad();
          const loss = ff
            .forward(attn.forward(x, x, x, { isCausal: true }))
            .pow(2)
            .mean();
          loss.backward();
          opt.step();
          return loss;
        };
        const f = jitted ? jit(body) : body;
        const xs = [0, 1, 2, 3, 4].map(() => randn([2, 3, 8]));
        manualSeed(13);
        const losses: number[] = [];
        for (const x of xs) losses.push(await f(x).item());
        if (jitted) expect((f as ReturnType<typeof jit>).stats.replayed).toBe(2);
        return [...losses, ...(await params[0].data())];
      };
      expect(await run(true)).toEqual(await run(false));
    });
  },
);

test('jit: a CNN step (Conv2d, BatchNorm2d running stats, MaxPool2d) = eager on the CPU, bit-exact', async () => {
  await on(B.cpu, async () => {
    const run = async (jitted: boolean) => {
      manualSeed(14);
      const bn = new nn.BatchNorm2d(3);
      const model = new nn.Sequential(
        new nn.Conv2d(1, 3, 3, { padding: 1 }),
        bn,
        new nn.ReLU(),
        new nn.MaxPool2d(2),
        new nn.Flatten(),
        new nn.Linear(12, 2),
      );
      const opt = new optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
      const body = ceStep(model, opt);
      const f = jitted ? jit(body) : body;
      const data = [0, 1, 2, 3, 4].map(() => ({ x: randn([2, 1, 4, 4]), y: randint(0, 2, [2]) }));
      const out: number[] = [];
      for (const { x, y } of data) out.push(await f(x, y).item());
      for (const t of [bn.running_mean!, bn.running_var!, bn.num_batches_tracked!, ...model.parameters()])
        out.push(...(await t.data()));
      return out;
    };
    expect(await run(true)).toEqual(await run(false));
  });
});

test('jit: a state storage an outside alias keeps alive in some calls and not in others still records one sequence', async () => {
  // Whether the optimizer's step frees the old weight inside the call depends on who else
  // holds it (here a detached alias, in the page a tensor awaiting the garbage collector):
  // the record must not depend on it.
  await on(B.cpu, async () => {
    const run = async (jitted: boolean) => {
      manualSeed(15);
      const model = new nn.Linear(4, 3);
      const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
      const body = (x: Tensor) => {
        opt.zeroGrad();
        const loss = model.forward(x).pow(2).mean();
        loss.backward();
        opt.step();
        return loss;
      };
      const f = jitted ? jit(body) : body;
      const out: number[] = [];
      for (let i = 0; i < 10; i++) {
        const peek = i % 2 === 1 ? model.weight.detach() : null;
        out.push(await f(randn([2, 4])).item());
        peek?.dispose();
      }
      if (jitted) expect((f as ReturnType<typeof jit>).stats).toMatchObject({ recorded: 2, replayed: 8 });
      return [...out, ...(await model.weight.data())];
    };
    expect(await run(true)).toEqual(await run(false));
  });
});

/**
 * The example's CNN (examples/mlp/src/cnn-model.ts with channels [16, 32] and dropout 0.2, fed
 * [N, 784] rows) and its step: Adam with a cosine schedule. Garbage is collected between some
 * steps, as the page's awaits let happen, so frees that wait on the collector come and go.
 */
async function cnnRun(
  jitted: boolean,
  steps: number,
  batch: number,
): Promise<{ out: number[]; stats?: { recorded: number; replayed: number } }> {
  manualSeed(16);
  const layers: nn.Module[] = [];
  let inC = 1;
  for (const c of [16, 32]) {
    layers.push(
      new nn.Conv2d(inC, c, 3, { padding: 1, bias: false }),
      new nn.BatchNorm2d(c),
      new nn.ReLU(),
      new nn.MaxPool2d(2),
    );
    inC = c;
  }
  const model = new nn.Sequential(...layers, new nn.Flatten(), new nn.Dropout(0.2), new nn.Linear(32 * 7 * 7, 10));
  const opt = new optim.Adam(model.parameters(), { lr: 2e-3 });
  const sched = new optim.CosineAnnealingLR(opt, { tMax: steps });
  const body = (x: Tensor, y: Tensor) => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x.reshape([x.shape[0], 1, 28, 28])), y);
    loss.backward();
    opt.step();
    return loss.detach();
  };
  const f = jitted ? jit(body) : body;
  const data = Array.from({ length: steps }, () => ({ x: randn([batch, 784]), y: randint(0, 10, [batch]) }));
  manualSeed(17);
  const out: number[] = [];
  for (const [i, { x, y }] of data.entries()) {
    const loss = f(x, y);
    sched.step();
    out.push(await loss.item());
    loss.dispose();
    if (i % 3 === 1) await collectGarbage();
  }
  const bn = layers[1] as nn.BatchNorm2d;
  for (const t of [bn.running_mean!, bn.running_var!, bn.num_batches_tracked!, ...model.parameters()])
    out.push(...(await t.data()));
  return { out, stats: jitted ? (f as ReturnType<typeof jit>).stats : undefined };
}

test('jit: the example CNN step (conv-BN-ReLU-pool x2, dropout, Adam, cosine) records and replays = eager on the CPU, bit-exact', async () => {
  await on(B.cpu, async () => {
    const want = await cnnRun(false, 7, 4);
    const got = await cnnRun(true, 7, 4);
    // Adam's first step makes its moments (a different op sequence): calls 1-3 record.
    expect(got.stats).toMatchObject({ recorded: 3, replayed: 4 });
    expect(got.out).toEqual(want.out);
  });
});

testGpu('jit: the example CNN step records and replays = eager on WebGPU (1e-5)', async () => {
  await on(B.gpu(), async () => {
    const want = await cnnRun(false, 5, 2);
    const got = await cnnRun(true, 5, 2);
    expect(got.stats).toMatchObject({ recorded: 3, replayed: 2 });
    expect(got.out.length).toBe(want.out.length);
    got.out.forEach((v, i) => {
      if (!(Math.abs(v - want.out[i]) <= 1e-5 * (1 + Math.abs(want.out[i]))))
        throw new Error(`value ${i}: jit ${v}, eager ${want.out[i]}`);
    });
  });
});

// Compiled replays issue an optimizer's per-parameter updates (and clipGradNorm's scalings)
// through Backend.elementwiseGroups: checked here with SGD momentum, whose update reads and
// writes a momentum buffer (five bindings per parameter, so several kernels per step).
testGpu('jit: MLP step with SGD momentum, StepLR, clipGradNorm = eager on WebGPU (merged update kernels)', () =>
  matchesEager(B.gpu(), 'sgd', 1e-5, { steps: 5 }),
);

// Backend.elementwiseGroups (jit's merged updates) against loops written here, on both
// backends: two update-shaped groups of different sizes and constants (one at an offset, so
// WebGPU's four-per-thread path and its scalar path both run), an int32 group, a strided one.
async function groupsMatchLoops(b: Backend): Promise<void> {
  const f = Math.fround;
  const lens = [12, 7, 40];
  const data = lens.map((n, k) =>
    [0, 1].map((j) => Float32Array.from({ length: n + 1 }, (_, i) => f(Math.sin(7 * k + 3 * j + i)))),
  );
  const groups = lens.map((n, k) => {
    const [p, g] = data[k].map((a) => b.fromData(a, 'float32'));
    const view = (s: typeof p) => ({ storage: s, view: new View([n], [1], k === 1 ? 1 : 0) });
    const lr = 0.1 * (k + 1);
    return {
      outs: [E.sub(E.in(0), E.mul(E.f(lr), E.add(E.in(1), E.mul(E.f(0.01), E.in(0))))), E.mul(E.in(1), E.in(1))],
      inputs: [view(p), view(g)],
      shape: [n],
    };
  });
  const ints = b.fromData(
    Int32Array.from({ length: 9 }, (_, i) => i * 5 - 20),
    'int32',
  );
  groups.push({ outs: [E.mul(E.in(0), E.i(3))], inputs: [{ storage: ints, view: new View([9], [1], 0) }], shape: [9] });
  const m = b.fromData(
    Float32Array.from({ length: 6 }, (_, i) => f(i / 4)),
    'float32',
  );
  groups.push({ outs: [E.exp(E.in(0))], inputs: [{ storage: m, view: new View([3, 2], [1, 3], 0) }], shape: [3, 2] });
  const got = b.elementwiseGroups!(groups);
  expect(got.map((r) => r.length)).toEqual([2, 2, 2, 1, 1]);
  const close = (x: ArrayLike<number>, want: number[], what: string) => {
    expect(x.length).toBe(want.length);
    want.forEach((w, i) => {
      if (!(Math.abs(x[i] - w) <= 1e-6 * (1 + Math.abs(w)))) throw new Error(`${what}[${i}]: ${x[i]}, expected ${w}`);
    });
  };
  for (let k = 0; k < lens.length; k++) {
    const off = k === 1 ? 1 : 0;
    const [p, g] = data[k].map((a) => Array.from(a.subarray(off, off + lens[k])));
    const lr = 0.1 * (k + 1);
    close(
      await b.read(got[k][0]),
      p.map((v, i) => v - lr * (g[i] + 0.01 * v)),
      `group ${k} out 0`,
    );
    close(
      await b.read(got[k][1]),
      g.map((v) => v * v),
      `group ${k} out 1`,
    );
  }
  close(
    await b.read(got[3][0]),
    Array.from({ length: 9 }, (_, i) => (i * 5 - 20) * 3),
    'int32 group',
  );
  close(
    await b.read(got[4][0]),
    [0, 3, 1, 4, 2, 5].map((i) => Math.exp(i / 4)),
    'strided group',
  );
}

test('Backend.elementwiseGroups = a loop per group (CPU)', () => groupsMatchLoops(B.cpu));
testGpu('Backend.elementwiseGroups = a loop per group (WebGPU)', () => groupsMatchLoops(B.gpu()));
