import * as surf from '@surf/nn';
import { decodeSplit } from '../data/binary';
import { MnistSplit } from '../data/digits';
import { classify } from '../classify';
import { buildCnn, firstConv } from '../cnn-model';
import { train } from '../train';
import type { FromWorker, ToWorker, TrainSettings, WorkerScope } from './protocol';

/**
 * The page's training worker: Surf, the model and the training data live here, so the page's
 * main thread only draws (the pad, the chart, the filters) and never waits on a training
 * step. WebGPU comes from the worker's own navigator.gpu (dedicated workers have it in
 * Chromium); without it Surf's CPU backend trains here too. The page talks to it with the
 * messages of protocol.ts.
 */

// The tsconfig's lib is DOM (the page's); this is the slice of the worker scope used here.
interface Scope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  addEventListener(type: 'message', fn: (e: MessageEvent<ToWorker>) => void): void;
}
const scope = self as unknown as Scope;
const post = (m: FromWorker, transfer: Transferable[] = []) => scope.postMessage(m, transfer);

let data: MnistSplit | null = null;
let model: surf.nn.Module | null = null;
let stopRequested = false;
let training = false;

function whereAmI(): WorkerScope {
  const ctor = (globalThis as { DedicatedWorkerGlobalScope?: new () => unknown }).DedicatedWorkerGlobalScope;
  return {
    scope: Object.getPrototypeOf(self)?.constructor?.name ?? 'unknown',
    isDedicatedWorker: typeof ctor === 'function' && self instanceof ctor,
    hasNavigatorGpu: !!(navigator as Navigator & { gpu?: unknown }).gpu,
  };
}

async function init(backend: 'auto' | 'cpu' | 'webgpu'): Promise<void> {
  const info = await surf.init({ backend });
  post({
    type: 'ready',
    backend: info.backend,
    description: info.description,
    software: !!info.software,
    fallbackReason: info.fallbackReason,
    where: whereAmI(),
  });
}

// ---- the CNN's first-layer filters, read back while it trains (one read at a time) ----

let filtersBusy = false;

async function sendFilters(step: number): Promise<void> {
  const conv = model ? firstConv(model) : null;
  if (!conv || filtersBusy) return;
  filtersBusy = true;
  // A copy taken now: the optimizer replaces the weight's storage while the read is in flight.
  const w = surf.noGrad(() => conv.weight.clone());
  try {
    const values = Float32Array.from((await w.data()) as Float32Array);
    post({ type: 'filters', step, shape: [...w.shape], values }, [values.buffer]);
  } finally {
    w.dispose();
    filtersBusy = false;
  }
}

async function runTraining(s: TrainSettings): Promise<void> {
  if (!data || training) return;
  training = true;
  stopRequested = false;
  let globalSteps = 0;
  try {
    const r = await train({
      data,
      hidden: s.hidden,
      batchSize: s.batchSize,
      lr: s.lr,
      epochs: s.epochs,
      build: s.model === 'cnn' ? () => buildCnn(s.channels, { rows: true }) : undefined,
      seed: s.seed,
      shift: s.shift,
      logEvery: 5,
      evalEvery: s.evalEvery,
      maxStepsPerEpoch: s.maxStepsPerEpoch,
      // A macrotask between steps: stop and predict messages are handled while it trains.
      yieldEvery: 1,
      shouldStop: () => stopRequested,
      onStart: (m) => {
        model?.parameters().forEach((p) => p.dispose());
        model = m;
        post({ type: 'started' });
        void sendFilters(0);
      },
      onLoss: (p) => {
        globalSteps = p.globalStep;
        post({ type: 'loss', epoch: p.epoch, globalStep: p.globalStep, stepsPerSec: p.stepsPerSec, loss: p.loss });
        void sendFilters(p.globalStep);
      },
      onEval: (p) => post({ type: 'eval', globalStep: p.globalStep, accuracy: p.accuracy }),
    });
    while (filtersBusy) await new Promise((res) => setTimeout(res, 5));
    await sendFilters(globalSteps);
    post({ type: 'done', stopped: r.stopped, testAccuracy: r.testAccuracy, steps: globalSteps });
  } finally {
    training = false;
  }
}

async function predict(id: number, digit: Float32Array): Promise<void> {
  let probs: Float32Array | null = null;
  try {
    probs = model ? Float32Array.from(await classify(model, digit)) : null;
  } finally {
    // Answered even when it failed (the error follows), so the page never waits forever.
    post({ type: 'prediction', id, probs }, probs ? [probs.buffer] : []);
  }
}

async function handle(m: ToWorker): Promise<void> {
  switch (m.type) {
    case 'init':
      return init(m.backend);
    case 'data':
      data = decodeSplit(new Uint8Array(m.bytes));
      post({ type: 'loaded', train: data.train.count, test: data.test.count });
      return;
    case 'train':
      return runTraining(m.settings);
    case 'stop':
      stopRequested = true;
      return;
    case 'predict':
      return predict(m.id, m.digit);
  }
}

scope.addEventListener('message', (e) => {
  handle(e.data).catch((err: Error) => post({ type: 'error', message: err.message }));
});
