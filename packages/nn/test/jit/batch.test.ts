import { NDArray, randomArray } from '@surf/core';
import {
  Module,
  Tensor,
  crossEntropy,
  dynamicData,
  jit,
  manualSeed,
  nextSeed,
  nn,
  optim,
  randn,
  randint,
  tensor,
} from '@surf/nn';
import { backends, on, testGpu } from '../helpers';

// Compiled replays on WebGPU join the runtime's open batch (webgpu-backend/src/replay/program.ts):
// no submit per step, dynamic values staged in the command stream, parameters and optimizer
// state double-buffered instead of copied back. Each test compares with the eager loop on
// the same backend, and reads state between replays, so a readback must see every queued step.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

interface Stats {
  submits: number;
  replays: number;
  bindGroupsCreated: number;
}
const statsOf = (t: Tensor): Stats => (t.ndarray.backend as unknown as { stats(): Stats }).stats();

function close(got: ArrayLike<number>, want: ArrayLike<number>, what: string, tol = 1e-5): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i]))))
      throw new Error(`${what}[${i}]: ${got[i]}, eager ${want[i]}`);
  }
}

/**
 * Adds noise made on the host and uploaded per call (jit's dynamic data, replayed by a fresh
 * upload): the size of the upload is the activation's, so a wide layer stages a large array.
 */
class HostNoise extends Module {
  forward(x: Tensor): Tensor {
    const n = x.shape.reduce((a, b) => a * b, 1);
    const noise = dynamicData(() => randomArray('uniform', n, nextSeed(), -0.05, 0.05));
    return x.add(Tensor.fromNDArray(NDArray.fromData(x.ndarray.backend, noise, x.shape)));
  }
}

function mlp(
  dropout: number,
  width = 8,
  noise = false,
): { model: nn.Sequential; opt: optim.SGD; step: (x: Tensor, y: Tensor) => Tensor } {
  manualSeed(4);
  const model = new nn.Sequential(
    new nn.Linear(16, width),
    new nn.ReLU(),
    ...(noise ? [new HostNoise()] : []),
    new nn.Dropout(dropout),
    new nn.Linear(width, 3),
  );
  const opt = new optim.SGD(model.parameters(), { lr: 0.2, momentum: 0.9 });
  const step = (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  return { model, opt, step };
}

/**
 * `steps` steps over `data` (indexes into `sets`), reading nothing until the end except a
 * parameter after step `peek` and an eager forward pass on the parameters queued after each
 * step (read at the end): both must see exactly the steps before them.
 */
async function run(
  jitted: boolean,
  steps: number,
  pick: (i: number) => { x: Tensor; y: Tensor },
  peek: number,
  dropout = 0,
  width = 8,
  forwards = true,
  noise = false,
) {
  const { model, step } = mlp(dropout, width, noise);
  // Losses are read after later steps: kept (keepOutputs), so the replays share submits.
  const f = jitted ? jit(step, { keepOutputs: true }) : step;
  manualSeed(9);
  const probe = randn([2, 16]);
  const losses: Tensor[] = [];
  const outs: Tensor[] = [];
  let peeked: Float32Array | null = null;
  const s0 = statsOf(probe);
  let tail = s0;
  for (let i = 0; i < steps; i++) {
    if (i === steps - 4) tail = statsOf(probe);
    const { x, y } = pick(i);
    losses.push(f(x, y));
    if (forwards) outs.push(model.forward(probe).detach());
    if (i === peek) peeked = (await model.parameters()[0].data()) as Float32Array;
  }
  const s1 = statsOf(probe);
  const ls = await Promise.all(losses.map((l) => l.item()));
  const os = await Promise.all(outs.map(async (o) => (await o.data()) as Float32Array));
  const params = await Promise.all(model.parameters().map(async (p) => (await p.data()) as Float32Array));
  return {
    ls,
    os,
    params,
    peeked: peeked!,
    submits: s1.submits - s0.submits,
    replays: s1.replays - s0.replays,
    bindGroups: s1.bindGroupsCreated - tail.bindGroupsCreated,
  };
}

async function matches(
  pick: () => (i: number) => { x: Tensor; y: Tensor },
  steps: number,
  dropout = 0,
  width = 8,
  forwards = true,
  noise = false,
) {
  const want = await run(false, steps, pick(), 5, dropout, width, forwards, noise);
  const got = await run(true, steps, pick(), 5, dropout, width, forwards, noise);
  close(got.ls, want.ls, 'loss');
  got.os.forEach((o, i) => close(o, want.os[i], `forward after step ${i}`));
  got.params.forEach((p, i) => close(p, want.params[i], `param ${i}`));
  close(got.peeked, want.peeked, 'parameter read after step 5');
  expect(got.replays).toBeGreaterThan(steps - 4);
  return got;
}

testGpu(
  'jit on WebGPU: replays share submits, and readbacks and eager ops between them see every step before',
  async () => {
    await on(B.gpu(), async () => {
      manualSeed(1);
      const x = randn([8, 16]);
      const y = randint(0, 3, [8]);
      const got = await matches(() => () => ({ x, y }), 13);
      // Twelve steps of ~20 dispatches plus the eager forwards fit in a few batches: without
      // sharing, every replay submitted on its own.
      expect(got.submits).toBeLessThan(got.replays);
    });
  },
);

testGpu(
  'jit on WebGPU: arguments cycling through a few buffers, or fresh every step, make no bind groups per step',
  async () => {
    await on(B.gpu(), async () => {
      manualSeed(2);
      const sets = Array.from({ length: 3 }, () => ({ x: randn([8, 16]), y: randint(0, 3, [8]) }));
      // (No eager forwards between steps here: their outputs, kept, would make bind groups.)
      const cycled = await matches(() => (i) => sets[i % 3], 20, 0, 8, false);
      // The program's bind groups (both parities of the double-buffered state) are made when it
      // compiles; arguments are copied in, so none are made per step.
      expect(cycled.bindGroups).toBe(0);
      const fresh = Array.from({ length: 12 }, () => ({ x: randn([8, 16]), y: randint(0, 3, [8]) }));
      const copied = await matches(() => (i) => fresh[i], 12, 0, 8, false);
      expect(copied.bindGroups).toBe(0);
    });
  },
);

testGpu(
  'jit on WebGPU: an argument freed right after the call, its buffer refilled before the submit, is read as it was',
  async () => {
    await on(B.gpu(), async () => {
      // 256x16 floats: uploads over 8 KB are queue.writeBuffer calls, which land before the
      // open batch; the pool must not hand a buffer the batch still reads to one of them.
      // Host data (randn draws on the device): the batch is uploaded, as a data loader's is.
      const make = (i: number) => {
        let s = 1 + i * 7919;
        const rnd = () => (s = (s * 48271) % 2147483647) / 2147483647 - 0.5;
        const xs = Array.from({ length: 256 }, () => Array.from({ length: 16 }, rnd));
        return { x: tensor(xs), y: tensor(Int32Array.from({ length: 256 }, () => Math.floor((rnd() + 0.5) * 3))) };
      };
      const pickFreeing = () => {
        let prev: { x: Tensor; y: Tensor } | null = null;
        return (i: number) => {
          prev?.x.dispose();
          prev?.y.dispose();
          return (prev = make(i));
        };
      };
      await matches(pickFreeing, 10);
    });
  },
);

testGpu(
  'jit on WebGPU: dynamic data too large to stage (a big host array per step) still follows the eager loop',
  async () => {
    await on(B.gpu(), async () => {
      manualSeed(3);
      const x = randn([64, 16]);
      const y = randint(0, 3, [64]);
      // 64x512 floats of host noise are 128 KB, more than a quarter of the parameter arena:
      // written by writeBuffer, so that replay submits on its own. (Dropout's masks are drawn
      // on the device from a 16-byte state, which stages like any small value.)
      const got = await matches(() => () => ({ x, y }), 8, 0.3, 512, true, true);
      expect(got.submits).toBeGreaterThanOrEqual(got.replays);
    });
  },
);

testGpu(
  'jit on WebGPU: double-buffered parameters follow an outside assign after an odd or even number of replays, memory flat',
  async () => {
    await on(B.gpu(), async () => {
      manualSeed(6);
      const x = randn([8, 16]);
      const y = randint(0, 3, [8]);
      const train = async (jitted: boolean, at: number) => {
        const { model, step } = mlp(0);
        const f = jitted ? jit(step) : step;
        const losses: number[] = [];
        const buffers: number[] = [];
        for (let i = 0; i < 12; i++) {
          if (i === at) {
            manualSeed(77);
            model.parameters()[0].assign(randn([8, 16]));
          }
          const l = f(x, y);
          losses.push(await l.item());
          l.dispose();
          buffers.push(x.ndarray.backend.memory().buffers);
        }
        const params = await Promise.all(model.parameters().map(async (p) => (await p.data()) as Float32Array));
        return { losses, params, buffers };
      };
      for (const at of [6, 7]) {
        const want = await train(false, at);
        const got = await train(true, at);
        close(got.losses, want.losses, `loss (assign before call ${at})`);
        got.params.forEach((p, i) => close(p, want.params[i], `param ${i} (assign before call ${at})`));
        // The assign sends jit back to recording, which frees the first program at once (its
        // buffers leave memory() then, not at garbage collection); the second one stays flat.
        expect(got.buffers[at]).toBeLessThan(got.buffers[at - 1]);
        expect(got.buffers[11]).toBe(got.buffers[10]);
      }
    });
  },
);
