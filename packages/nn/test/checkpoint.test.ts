import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Module,
  Tensor,
  ValueError,
  crossEntropy,
  load,
  loadCheckpoint,
  loadCheckpointFile,
  manualSeed,
  nn,
  optim,
  save,
  saveCheckpoint,
  saveCheckpointFile,
  tensor,
  tidy,
} from '@surf/nn';
import { backends, describeEach, on } from './helpers';

// Checkpoints hold model, optimizer and scheduler state: training resumed from one gives
// exactly the losses of training that never stopped, on each backend.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

class Net extends Module {
  fc1 = new nn.Linear(3, 5);
  act = new nn.Tanh();
  fc2 = new nn.Linear(5, 3);
  forward(x: Tensor): Tensor {
    return this.fc2.forward(this.act.forward(this.fc1.forward(x)));
  }
}

const X = [
  [0.5, -1, 2],
  [1.5, 0.25, -0.5],
  [-2, 1, 0.75],
  [0.1, 0.2, 0.3],
];
const Y = [0, 2, 1, 2];

function setup(seed: number) {
  manualSeed(seed);
  const model = new Net();
  model.fc1.bias!.requiresGrad_(false); // a frozen parameter travels too
  const optimizer = new optim.Adam(model.parameters(), { lr: 0.05, amsgrad: true, weightDecay: 0.01 });
  const scheduler = new optim.StepLR(optimizer, { stepSize: 2, gamma: 0.5 });
  return { model, optimizer, scheduler };
}

async function train(s: ReturnType<typeof setup>, steps: number): Promise<number[]> {
  const x = tensor(X, { dtype: 'float32' });
  const y = tensor(Y, { dtype: 'int32' });
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const l = tidy(() => {
      s.optimizer.zeroGrad();
      const loss = crossEntropy(s.model.forward(x), y);
      loss.backward();
      s.optimizer.step();
      s.scheduler.step();
      return loss;
    });
    losses.push(await l.item());
    l.dispose();
  }
  return losses;
}

describeEach(['cpu', 'webgpu'] as const, 'checkpoints on %s', (kind) => {
  test('resuming from a checkpoint gives the same losses as not stopping', async () => {
    await on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
      const straight = await train(setup(1), 6);
      const first = setup(1);
      const head = await train(first, 3);
      const bytes = await saveCheckpoint({ ...first, step: 3, extra: { note: 'half way' } });
      // A fresh run with other random weights picks up exactly where the first stopped.
      const resumed = setup(2);
      const { step, extra } = loadCheckpoint(bytes, resumed);
      expect(step).toBe(3);
      expect(extra).toEqual({ note: 'half way' });
      expect(resumed.optimizer.paramGroups[0].lr).toBe(first.optimizer.paramGroups[0].lr);
      expect(resumed.scheduler.lastEpoch).toBe(3);
      const tail = await train(resumed, 3);
      expect([...head, ...tail]).toEqual(straight);
      // The model part is a plain state dict under 'model.'; the optimizer's moments are saved.
      const keys = Object.keys(load(bytes));
      expect(keys).toContain('model.fc1.bias');
      expect(keys).toContain('optimizer.0.maxExpAvgSq');
    });
  });
});

test('files, and clear errors for mismatched parts', () =>
  on(B.cpu, async () => {
    const s = setup(3);
    await train(s, 1);
    const path = join(mkdtempSync(join(tmpdir(), 'surf-ckpt-')), 'ckpt.safetensors');
    await saveCheckpointFile(path, { model: s.model, optimizer: s.optimizer, step: 1 });
    const t = setup(4);
    expect((await loadCheckpointFile(path, { model: t.model, optimizer: t.optimizer })).step).toBe(1);
    const bytes = await saveCheckpoint({ model: s.model });
    expect(() => loadCheckpoint(bytes, { model: t.model, optimizer: t.optimizer })).toThrow(/holds no optimizer state/);
    const sgd = new optim.SGD(t.model.parameters(), { lr: 0.1 });
    const full = await saveCheckpoint(s);
    expect(() => loadCheckpoint(full, { model: t.model, optimizer: sgd })).toThrow(
      /the checkpoint's optimizer is Adam; got SGD/,
    );
    const plain = await save(s.model);
    expect(() => loadCheckpoint(plain, { model: t.model })).toThrow(/not a checkpoint from saveCheckpoint/);
    expect(() => loadCheckpoint(bytes, 3 as never)).toThrow(ValueError);
    await expect(saveCheckpoint({ model: 3 } as never)).rejects.toThrow(/expected \{ model: Module/);
  }));
