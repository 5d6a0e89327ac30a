import {
  DataLoader,
  Module,
  Tensor,
  ValueError,
  crossEntropy,
  getRngState,
  jit,
  loadCheckpoint,
  manualSeed,
  nn,
  optim,
  randint,
  randn,
  saveCheckpoint,
  setRngState,
  tidy,
} from '@surf/nn';
import { backends, describeEach, on } from './helpers';

// Exact resume: a model with Dropout trained from a shuffling DataLoader, checkpointed
// mid-epoch with the random state and the loader's position, continues in a fresh process
// (fresh model, optimizer and loader, other seeds) with bit-equal losses.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

class Net extends Module {
  fc1 = new nn.Linear(6, 16);
  act = new nn.ReLU();
  drop = new nn.Dropout(0.3);
  fc2 = new nn.Linear(16, 3);
  forward(x: Tensor): Tensor {
    return this.fc2.forward(this.drop.forward(this.act.forward(this.fc1.forward(x))));
  }
}

function setup(seed: number, jitted: boolean) {
  manualSeed(1);
  const x = randn([37, 6]);
  const y = randint(0, 3, [37]);
  manualSeed(seed); // the weights, the loader's shuffle seed and the Dropout masks follow
  const model = new Net();
  const optimizer = new optim.Adam(model.parameters(), { lr: 0.02 });
  const loader = new DataLoader([x, y], { batchSize: 8, shuffle: true });
  const body = (xb: Tensor, yb: Tensor) => {
    optimizer.zeroGrad();
    const loss = crossEntropy(model.forward(xb), yb);
    loss.backward();
    optimizer.step();
    return loss;
  };
  const step = jitted ? jit(body) : (xb: Tensor, yb: Tensor) => tidy(() => body(xb, yb));
  return { model, optimizer, loader, step };
}

type Run = ReturnType<typeof setup>;

/** Trains until `until` steps in all; calls `at` after step `atStep`. */
async function train(r: Run, from: number, until: number, at?: { step: number; fn: () => Promise<void> }) {
  const losses: number[] = [];
  let step = from;
  while (step < until) {
    for (const [xb, yb] of r.loader) {
      const loss = r.step(xb, yb);
      losses.push(await loss.item());
      loss.dispose();
      step++;
      if (at && step === at.step) await at.fn();
      if (step === until) break;
    }
  }
  return losses;
}

describeEach(['cpu', 'webgpu'] as const, 'exact resume on %s', (kind) => {
  for (const jitted of [false, true])
    test(`Dropout + shuffling loader, checkpoint mid-epoch${jitted ? ', jitted step' : ''}: equal losses`, () =>
      on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
        // 5 batches an epoch; stop after 7 steps (epoch 1, batch 2), run to 13.
        const a = setup(2, jitted);
        let bytes: Uint8Array | null = null;
        const straight = await train(a, 0, 13, {
          step: 7,
          fn: async () => {
            bytes = await saveCheckpoint({ model: a.model, optimizer: a.optimizer, loader: a.loader, step: 7 });
          },
        });
        expect(a.loader.state()).toEqual({ epoch: 2, batch: 3, seed: a.loader.seed });
        const b = setup(3, jitted);
        expect(b.loader.seed).not.toEqual(a.loader.seed);
        const { step } = loadCheckpoint(bytes!, { model: b.model, optimizer: b.optimizer, loader: b.loader });
        expect(step).toBe(7);
        expect(b.loader.state()).toEqual({ epoch: 1, batch: 2, seed: a.loader.seed });
        const resumed = await train(b, 7, 13);
        expect(resumed).toEqual(straight.slice(7));
        // Dropout is what makes the random state matter: the same resume at another offset differs.
        const c = setup(3, jitted);
        loadCheckpoint(bytes!, { model: c.model, optimizer: c.optimizer, loader: c.loader });
        setRngState({ ...getRngState(), offset: getRngState().offset + 1 });
        expect(await train(c, 7, 13)).not.toEqual(straight.slice(7));
      }));
});

test('DataLoader.state/loadState: positions, epoch ends, errors', () =>
  on(B.cpu, async () => {
    const { loader } = setup(4, false);
    expect(loader.state()).toEqual({ epoch: 0, batch: 0, seed: loader.seed });
    const orders: number[][] = [];
    for (const [xb] of loader) orders.push(xb.shape);
    expect(orders).toHaveLength(5);
    expect(loader.state()).toEqual({ epoch: 1, batch: 0, seed: loader.seed });
    expect(() => loader.loadState({ epoch: 0, batch: 6, seed: 1 })).toThrow(/batch 6 is past the 5 batches/);
    // A finished epoch resumes with the next one's first batch.
    loader.loadState({ epoch: 3, batch: 5, seed: loader.seed });
    expect(loader.state()).toEqual({ epoch: 4, batch: 0, seed: loader.seed });
    let n = 0;
    for (const _ of loader) n++;
    expect(n).toBe(5);
    expect(() => loader.loadState({ epoch: 0, batch: 1 } as never)).toThrow(ValueError);
    expect(() => loader.loadState({ epoch: 0, batch: 1, seed: 1, epochs: 2 } as never)).toThrow(/did you mean/);
    const model = new Net();
    const bytes = await saveCheckpoint({ model });
    expect(() => loadCheckpoint(bytes, { model, loader })).toThrow(/holds no loader position/);
  }));
