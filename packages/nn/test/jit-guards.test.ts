import { Backend } from '@surf/core';
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
import { backends, on, testEach } from './helpers';

// jit's guards: what a recording read from JS state (module training flags, the tensors it
// binds, the module fields holding them) is checked before every replay; a change records
// again (or replays the record made with the other flag), never replays stale work. Each case
// runs the same program eagerly and compares: bit-exact on the CPU, within 1e-5 on WebGPU.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const backendOf = (kind: 'cpu' | 'webgpu'): Backend => (kind === 'cpu' ? B.cpu : B.gpu());
const tolOf = (kind: 'cpu' | 'webgpu') => (kind === 'cpu' ? 0 : 1e-5);

function expectClose(got: number[], want: number[], tol: number, what: string): void {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    if (!(Math.abs(g - want[i]) <= tol * (1 + Math.abs(want[i]))))
      throw new Error(`${what}[${i}]: ${g}, eager ${want[i]}`);
  });
}

/** A model with Dropout and BatchNorm (both read `training`), Adam, and its step. */
function setup() {
  manualSeed(5);
  const model = new nn.Sequential(
    new nn.Linear(5, 7),
    new nn.BatchNorm1d(7),
    new nn.ReLU(),
    new nn.Dropout(0.4),
    new nn.Linear(7, 3),
  );
  const opt = new optim.Adam(model.parameters(), { lr: 0.01 });
  const step = (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  manualSeed(6);
  const x = randn([6, 5]);
  const y = randint(0, 3, [6]);
  return { model, step, x, y };
}

/** Runs `plan` (t: a training step in train mode, e: in eval mode, E: an eager step, f: an eager forward). */
async function run(plan: string, jitted: boolean): Promise<{ losses: number[]; records: number; replayed: number }> {
  const { model, step, x, y } = setup();
  const f = jitted ? jit(step) : step;
  manualSeed(7);
  const losses: number[] = [];
  for (const c of plan) {
    if (c === 't') model.train();
    if (c === 'e') model.eval();
    const l = c === 'E' ? step(x, y) : c === 'f' ? model.forward(x).sum() : f(x, y);
    losses.push(await l.item());
    l.dispose();
  }
  const stats = (f as { stats?: { records: number; replayed: number } }).stats;
  return { losses, records: stats?.records ?? 0, replayed: stats?.replayed ?? 0 };
}

testEach(
  ['cpu', 'webgpu'],
  'jit guards on %s: eval() without reset() replays eval work, train() the train record',
  (kind) =>
    on(backendOf(kind), async () => {
      const plan = 'tttttteeeeetttt';
      const want = await run(plan, false);
      const got = await run(plan, true);
      expectClose(got.losses, want.losses, tolOf(kind), 'loss');
      // One record per mode, and both replayed.
      expect(got.records).toBe(2);
      expect(got.replayed).toBeGreaterThanOrEqual(6);
    }),
);

testEach(['cpu', 'webgpu'], 'jit guards on %s: eager calls of the step and the model between jitted calls', (kind) =>
  on(backendOf(kind), async () => {
    const plan = 'tEtfttEtttttEttttfttttEEtttt';
    const want = await run(plan, false);
    const got = await run(plan, true);
    expectClose(got.losses, want.losses, tolOf(kind), 'loss');
    expect(got.replayed).toBeGreaterThanOrEqual(6);
  }),
);

testEach(['cpu', 'webgpu'], 'jit guards on %s: a parameter replaced by assigning the module field is read', (kind) =>
  on(backendOf(kind), async () => {
    manualSeed(8);
    const lin = new nn.Linear(3, 2);
    const f = jit((x: Tensor) => lin.forward(x));
    const x = randn([4, 3]);
    for (let i = 0; i < 4; i++) f(x).dispose();
    expect(f.stats.replayed).toBe(2);
    // The old weight stays alive (held here), so its storage is still valid: only the field changed.
    const old = lin.weight;
    (lin as { weight: Tensor }).weight = nn.parameter(randn([2, 3]));
    const got = Array.from((await f(x).data()) as Float32Array);
    const want = Array.from((await lin.forward(x).data()) as Float32Array);
    expectClose(got, want, tolOf(kind), 'out');
    expect(old.isDisposed).toBe(false);
  }),
);

testEach(
  ['cpu', 'webgpu'],
  'jit guards on %s: a captured tensor changed in place while a view keeps its old storage',
  (kind) =>
    on(backendOf(kind), async () => {
      const w = tensor([1, 2, 3]);
      const f = jit((x: Tensor) => x.mul(w));
      const x = tensor([1, 1, 1]);
      for (let i = 0; i < 4; i++) f(x).dispose();
      expect(f.stats.replayed).toBe(2);
      // The view shares the old storage; add_ gives w a new one.
      const view = w.detach();
      w.add_(10);
      expect(Array.from((await f(x).data()) as Float32Array)).toEqual([11, 12, 13]);
      expect(Array.from((await view.data()) as Float32Array)).toEqual([1, 2, 3]);
    }),
);

testEach(['cpu', 'webgpu'], 'jit guards on %s: a captured tensor that was disposed raises a clear error', (kind) =>
  on(backendOf(kind), async () => {
    const w = tensor([1, 2, 3]);
    const keepAlive = w.detach(); // its storage outlives w, so only the guard can tell
    const f = jit((x: Tensor) => x.mul(w));
    const x = tensor([1, 1, 1]);
    for (let i = 0; i < 4; i++) f(x).dispose();
    w.dispose();
    expect(() => f(x)).toThrow(/used after dispose/);
    keepAlive.dispose();
  }),
);

test('jit guards: a changed training flag is noticed without step.reset(), and reset() still drops every record', async () => {
  await on(B.cpu, async () => {
    const drop = new nn.Dropout(0.5);
    const f = jit((x: Tensor) => drop.forward(x).mul(2));
    const x = tensor([1, 2, 3, 4]);
    for (let i = 0; i < 3; i++) f(x).dispose();
    drop.eval();
    expect(Array.from((await f(x).data()) as Float32Array)).toEqual([2, 4, 6, 8]);
    // Setting the flag directly (not through eval()) is guarded too.
    drop.training = true;
    drop.training = false;
    expect(Array.from((await f(x).data()) as Float32Array)).toEqual([2, 4, 6, 8]);
    f.reset();
    expect(f.stats.records).toBe(0);
    expect(JitError).toBeDefined();
  });
});

testEach(
  ['cpu', 'webgpu'],
  'jit guards on %s: arguments freed after each call are not state: the step still replays',
  (kind) =>
    on(backendOf(kind), async () => {
      const { step } = setup();
      const f = jit(step);
      manualSeed(9);
      for (let i = 0; i < 8; i++) {
        const x = randn([6, 5]);
        const y = randint(0, 3, [6]);
        f(x, y);
        x.dispose();
        y.dispose();
      }
      // Adam makes its moments at the first step: calls 2 and 3 line up, 4-8 replay.
      expect(f.stats.replayed).toBe(5);
    }),
);

test('jit guards: a reassigned closure variable is read again once the old tensor is collected (records hold tensors weakly)', async () => {
  await on(B.cpu, async () => {
    let w = tensor([1, 2, 3]);
    const f = jit((x: Tensor) => x.mul(w));
    const x = tensor([1, 1, 1]);
    for (let i = 0; i < 4; i++) f(x).dispose();
    expect(f.stats.replayed).toBe(2);
    // Nothing holds the old tensor now (a closure variable cannot be observed until then).
    w = tensor([10, 20, 30]);
    // A task first: the replays' WeakRef reads keep their targets alive until the job ends.
    await new Promise((r) => setTimeout(r, 0));
    await collectGarbage();
    expect(Array.from((await f(x).data()) as Float32Array)).toEqual([10, 20, 30]);
  });
});
