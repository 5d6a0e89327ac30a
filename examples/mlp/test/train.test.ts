import * as surf from '@surf/nn';
import { loadMnist } from '../src/data/mnist-node';
import { LossPoint, train, TrainResult } from '../src/train';
import { testGpu } from '../../../test-support/gpu';

// A shortened run of the example's real training loop (60 steps of 64 digits, one test
// evaluation): the loss must fall far below the untrained network's ln(10) ≈ 2.30 and the
// accuracy on the 2,000 held-out digits must be far above chance (10%), on both backends.
const SHORT = { epochs: 1, maxStepsPerEpoch: 60, logEvery: 10, seed: 3 };

async function shortRun(): Promise<{ r: TrainResult; losses: LossPoint[] }> {
  const losses: LossPoint[] = [];
  const r = await train({ data: loadMnist(), ...SHORT, onLoss: (p) => losses.push(p) });
  return { r, losses };
}

function checkLearned({ r, losses }: { r: TrainResult; losses: LossPoint[] }): void {
  expect(r.steps).toBe(60);
  expect(losses.map((p) => p.step)).toEqual([1, 10, 20, 30, 40, 50, 60]);
  expect(r.firstLoss).toBeGreaterThan(1.9);
  expect(r.firstLoss).toBeLessThan(2.8);
  const late = (losses[losses.length - 1].loss + losses[losses.length - 2].loss) / 2;
  expect(late).toBeLessThan(0.4 * r.firstLoss);
  expect(r.testAccuracy).toBeGreaterThan(0.75);
  expect(r.epochs[0].trainLoss).toBeLessThan(r.firstLoss);
}

let cpuRun: { r: TrainResult; losses: LossPoint[] } | undefined;

afterAll(async () => {
  await surf.init({ backend: 'cpu' });
});

test('a short run on the CPU backend learns the digits', async () => {
  await surf.init({ backend: 'cpu' });
  cpuRun = await shortRun();
  checkLearned(cpuRun);
  expect(surf.memory().tensors).toBeLessThan(20);
});

testGpu('the same short run on WebGPU learns, and tracks the CPU run step for step', async () => {
  await surf.init({ backend: 'webgpu' });
  const gpu = await shortRun();
  checkLearned(gpu);
  // Same seed, same weights and batches: only float rounding differs between the backends.
  expect(cpuRun).toBeDefined();
  gpu.losses.forEach((p, i) => expect(Math.abs(p.loss - cpuRun!.losses[i].loss)).toBeLessThan(0.02));
  expect(Math.abs(gpu.r.testAccuracy - cpuRun!.r.testAccuracy)).toBeLessThan(0.01);
});
