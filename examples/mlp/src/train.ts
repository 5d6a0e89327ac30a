import * as surf from '@surf/nn';
import { DEFAULT_LR, DEFAULTS } from './args';
import { Digits, MnistSplit, PIXELS, toFloatPixels, toInt32Labels } from './data/digits';
import { RandomShift } from './augment';
import { buildMlp } from './model';

export interface TrainOptions {
  data: MnistSplit;
  hidden?: number[];
  epochs?: number;
  batchSize?: number;
  lr?: number;
  optimizer?: 'adam' | 'sgd';
  /** Shift training digits by up to this many pixels each way (0 = off). */
  shift?: number;
  /** 'cosine' (default) anneals the learning rate to 0 over the run; 'constant' keeps it. */
  schedule?: 'cosine' | 'constant';
  seed?: number;
  /** Read the loss back every N steps: each read waits for the device, so not every step. */
  logEvery?: number;
  /** Also measure test accuracy every N steps (the browser's live plot); 0 = once per epoch. */
  evalEvery?: number;
  /** Stop each epoch after this many steps (short runs for tests and demos). */
  maxStepsPerEpoch?: number;
  /** Replay the captured training step with surf.jit (default, the MLP and the CNN); false: the eager loop. */
  jit?: boolean;
  /** Yield to the event loop every N steps so a page stays responsive. */
  yieldEvery?: number;
  /** Checked between steps; true ends training after the current step. */
  shouldStop?: () => boolean;
  /** Builds the network instead of the MLP of `hidden` (the page's CNN); it takes [N, 784] rows. */
  build?: () => surf.nn.Sequential;
  /** Called once the model exists, before the first step (the page predicts with it live). */
  onStart?: (model: surf.nn.Sequential) => void;
  onLoss?: (p: LossPoint) => void;
  onEval?: (p: EvalPoint) => void;
  onEpoch?: (e: EpochResult) => void;
}

export interface LossPoint {
  epoch: number;
  /** Step within the epoch, 1-based. */
  step: number;
  stepsInEpoch: number;
  globalStep: number;
  loss: number;
  stepsPerSec: number;
}

export interface EvalPoint {
  epoch: number;
  globalStep: number;
  accuracy: number;
}

export interface EpochResult {
  epoch: number;
  /** Mean training loss over the epoch's steps. */
  trainLoss: number;
  testAccuracy: number;
  seconds: number;
  stepsPerSec: number;
}

export interface TrainResult {
  model: surf.nn.Sequential;
  epochs: EpochResult[];
  /** The first loss read (step 1): the untrained network's loss. */
  firstLoss: number;
  testAccuracy: number;
  steps: number;
  stopped: boolean;
}

const nextTick = () => new Promise<void>((r) => setTimeout(r, 0));

/** The training set's tensors and the test set's, uploaded once. */
export interface DeviceData {
  trainX: surf.Tensor;
  trainY: surf.Tensor;
  testX: surf.Tensor;
  testY: surf.Tensor;
  dispose(): void;
}

// tidy() frees the flat upload; the [n, 784] view keeps the storage alive.
function images(d: Digits): surf.Tensor {
  return surf.tidy(() => surf.tensor(toFloatPixels(d)).reshape([d.count, PIXELS]));
}

/** A set's images [n, 784] and int32 labels [n] on the current backend. */
export function uploadDigits(d: Digits): { x: surf.Tensor; y: surf.Tensor } {
  return { x: images(d), y: surf.tensor(toInt32Labels(d)) };
}

export function uploadData(data: MnistSplit): DeviceData {
  const train = uploadDigits(data.train);
  const test = uploadDigits(data.test);
  const t = { trainX: train.x, trainY: train.y, testX: test.x, testY: test.y };
  return { ...t, dispose: () => Object.values(t).forEach((x) => x.dispose()) };
}

/**
 * Fraction of rows whose highest logit is the label. Counts are summed on the device and read
 * back once; rows go through in chunks to bound the activations' memory.
 */
export async function accuracy(model: surf.nn.Module, x: surf.Tensor, y: surf.Tensor, chunk = 1000): Promise<number> {
  const n = x.shape[0];
  const wasTraining = model.training;
  model.eval();
  const correct = surf.noGrad(() =>
    surf.tidy(() => {
      let total: surf.Tensor | null = null;
      for (let s = 0; s < n; s += chunk) {
        const len = Math.min(chunk, n - s);
        const hits = model
          .forward(x.narrow(0, s, len))
          .argmax(1)
          .eq(y.narrow(0, s, len))
          .int()
          .sum();
        total = total ? total.add(hits) : hits;
      }
      return total as surf.Tensor;
    }),
  );
  model.train(wasTraining);
  const c = await correct.item();
  correct.dispose();
  return c / n;
}

/**
 * Trains the MLP with cross-entropy. The CLI, the browser page and the tests all call this;
 * the caller picks the backend first (surf.init). The training loss for the epoch summary is
 * summed on the device and read once per epoch; the running loss is read every `logEvery`.
 */
export async function train(opts: TrainOptions): Promise<TrainResult> {
  const hidden = opts.hidden ?? DEFAULTS.hidden;
  const epochs = opts.epochs ?? DEFAULTS.epochs;
  const batchSize = opts.batchSize ?? DEFAULTS.batchSize;
  const seed = opts.seed ?? 0;
  const logEvery = opts.logEvery ?? DEFAULTS.logEvery;
  const evalEvery = opts.evalEvery ?? 0;

  surf.manualSeed(seed);
  const model = opts.build ? opts.build() : buildMlp(hidden);
  const augment = new RandomShift(opts.shift ?? DEFAULTS.shift, seed);
  const optimizer =
    opts.optimizer === 'sgd'
      ? new surf.optim.SGD(model.parameters(), { lr: opts.lr ?? DEFAULT_LR.sgd, momentum: 0.9 })
      : new surf.optim.Adam(model.parameters(), { lr: opts.lr ?? DEFAULT_LR.adam });
  const dev = uploadData(opts.data);
  const loader = new surf.DataLoader([dev.trainX, dev.trainY], { batchSize, shuffle: true, seed, dropLast: true });
  const stepsPerEpoch = Math.min(loader.length, opts.maxStepsPerEpoch ?? Infinity);
  const scheduler =
    (opts.schedule ?? DEFAULTS.schedule) === 'cosine'
      ? new surf.optim.CosineAnnealingLR(optimizer, { tMax: epochs * stepsPerEpoch })
      : null;

  const stepBody = (x: surf.Tensor, y: surf.Tensor): surf.Tensor => {
    optimizer.zeroGrad();
    const l = surf.crossEntropy(model.forward(x), y);
    l.backward();
    optimizer.step();
    return l.detach();
  };
  const trainStep =
    (opts.jit ?? true) ? surf.jit(stepBody) : (x: surf.Tensor, y: surf.Tensor) => surf.tidy(() => stepBody(x, y));

  opts.onStart?.(model);
  const results: EpochResult[] = [];
  let firstLoss = NaN;
  let globalStep = 0;
  let stopped = false;
  try {
    for (let epoch = 1; epoch <= epochs && !stopped; epoch++) {
      const t0 = performance.now();
      let lossSum = surf.keep(surf.tensor(0));
      let step = 0;
      for (const [xb, yb] of loader) {
        if (step >= stepsPerEpoch) break;
        step++;
        globalStep++;
        // The random shift picks views in JS, so it runs before the (captured) step.
        const xa = augment.apply(xb);
        const loss = trainStep(xa, yb);
        if (xa !== xb) xa.dispose();
        scheduler?.step();
        const next = lossSum.add(loss);
        lossSum.dispose();
        lossSum = surf.keep(next);
        if (step % logEvery === 0 || step === 1 || step === stepsPerEpoch) {
          const v = await loss.item();
          if (globalStep === 1) firstLoss = v;
          opts.onLoss?.({
            epoch,
            step,
            stepsInEpoch: stepsPerEpoch,
            globalStep,
            loss: v,
            stepsPerSec: (step * 1000) / (performance.now() - t0),
          });
        }
        loss.dispose();
        if (evalEvery > 0 && globalStep % evalEvery === 0) {
          opts.onEval?.({ epoch, globalStep, accuracy: await accuracy(model, dev.testX, dev.testY) });
        }
        if (opts.yieldEvery && step % opts.yieldEvery === 0) await nextTick();
        if (opts.shouldStop?.()) {
          stopped = true;
          break;
        }
      }
      const trainLoss = (await lossSum.item()) / step;
      lossSum.dispose();
      const testAccuracy = await accuracy(model, dev.testX, dev.testY);
      const seconds = (performance.now() - t0) / 1000;
      const r: EpochResult = { epoch, trainLoss, testAccuracy, seconds, stepsPerSec: step / seconds };
      results.push(r);
      opts.onEpoch?.(r);
      if (evalEvery > 0 && globalStep % evalEvery !== 0) opts.onEval?.({ epoch, globalStep, accuracy: testAccuracy });
    }
  } finally {
    dev.dispose();
  }
  return {
    model,
    epochs: results,
    firstLoss,
    testAccuracy: results[results.length - 1]?.testAccuracy ?? NaN,
    steps: globalStep,
    stopped,
  };
}
