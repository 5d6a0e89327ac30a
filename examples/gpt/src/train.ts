import * as surf from '@surf/nn';
import type { CharData } from './corpus';
import { Gpt, GptConfig } from './model';
import { rng } from './sample';

export interface TrainConfig {
  steps: number;
  batchSize: number;
  blockSize: number;
  nEmbd: number;
  nHead: number;
  nLayer: number;
  dropout: number;
  lr: number;
  /** Linear warmup steps, then cosine decay to lr/10. */
  warmup: number;
  weightDecay: number;
  /** Max global gradient norm. */
  clip: number;
  /** Validation loss every N steps (and at the end). */
  evalEvery: number;
  /** Windows of blockSize characters the validation loss averages over. */
  evalBatches: number;
  seed: number;
  /** Replay the captured training step with surf.jit (default true); false: the eager step under tidy. */
  jit?: boolean;
}

export const DEFAULT_TRAIN: TrainConfig = {
  steps: 3000,
  batchSize: 32,
  blockSize: 128,
  nEmbd: 128,
  nHead: 4,
  nLayer: 4,
  dropout: 0,
  lr: 2e-3,
  warmup: 100,
  weightDecay: 0.1,
  clip: 1,
  evalEvery: 250,
  evalBatches: 8,
  seed: 1,
};

export interface StepInfo {
  step: number;
  loss: number;
  lr: number;
  tokensPerSec: number;
}
export interface EvalInfo {
  step: number;
  valLoss: number;
}

export interface TrainHooks {
  /** Every `logEvery` steps: the step's loss (read back, so not every step). */
  onStep?: (s: StepInfo) => void;
  onEval?: (e: EvalInfo) => void | Promise<void>;
  logEvery?: number;
  /** Give the event loop a turn every N steps (a page stays responsive on the CPU backend). */
  yieldEvery?: number;
  shouldStop?: () => boolean;
}

/** B windows of T+1 characters at offsets drawn by `rand`, as x = ids[o..o+T), y = ids[o+1..o+T]. */
export function batchAt(ids: Int32Array, offsets: readonly number[], T: number): { x: surf.Tensor; y: surf.Tensor } {
  const B = offsets.length;
  const x = new Int32Array(B * T),
    y = new Int32Array(B * T);
  offsets.forEach((o, b) => {
    x.set(ids.subarray(o, o + T), b * T);
    y.set(ids.subarray(o + 1, o + T + 1), b * T);
  });
  return { x: surf.tensor(x).reshape([B, T]), y: surf.tensor(y).reshape([B, T]) };
}

/**
 * Mean validation loss (nats/char) over `batches` batches of windows at fixed, evenly spaced
 * offsets: the same characters every time, so numbers along a run compare.
 */
export async function evaluate(model: Gpt, val: Int32Array, batches: number, batchSize: number): Promise<number> {
  const T = model.config.blockSize;
  const n = batches * batchSize;
  const span = val.length - T - 1;
  const wasTraining = model.training;
  model.eval();
  let total = 0;
  try {
    for (let b = 0; b < batches; b++) {
      const offsets = Array.from({ length: batchSize }, (_, i) => Math.floor(((b * batchSize + i) * span) / n));
      const l = surf.noGrad(() =>
        surf.tidy(() => {
          const { x, y } = batchAt(val, offsets, T);
          return model.loss(x, y);
        }),
      );
      total += await l.item();
      l.dispose();
    }
  } finally {
    model.train(wasTraining);
  }
  return total / batches;
}

export interface TrainResult {
  model: Gpt;
  valLoss: number;
  steps: number;
  firstLoss: number;
  evals: EvalInfo[];
  /** The jitted step's record/replay counts (null for the eager step). */
  jit: surf.JitStats | null;
}

/**
 * AdamW (weight decay on matrices only, as nanoGPT), linear warmup + cosine decay, gradient
 * clipping; the step captured with surf.jit unless cfg.jit is false. The caller picks the
 * backend first (surf.init).
 */
export async function trainGpt(data: CharData, cfg: TrainConfig, hooks: TrainHooks = {}): Promise<TrainResult> {
  surf.manualSeed(cfg.seed);
  const mc: GptConfig = {
    vocabSize: data.vocab.length,
    blockSize: cfg.blockSize,
    nEmbd: cfg.nEmbd,
    nHead: cfg.nHead,
    nLayer: cfg.nLayer,
    dropout: cfg.dropout,
  };
  const model = new Gpt(mc);
  const params = model.parameters();
  const opt = new surf.optim.AdamW(
    [
      { params: params.filter((p) => p.ndim >= 2), weightDecay: cfg.weightDecay },
      { params: params.filter((p) => p.ndim < 2), weightDecay: 0 },
    ],
    { lr: cfg.lr, betas: [0.9, 0.99] },
  );
  const warm = Math.max(1, Math.min(cfg.warmup, cfg.steps - 1));
  const cosine = new surf.optim.CosineAnnealingLR(opt, { tMax: Math.max(1, cfg.steps - warm), etaMin: cfg.lr / 10 });
  const sched = new surf.optim.LinearWarmup(opt, { warmupSteps: warm, after: cosine });
  const rand = rng(cfg.seed);
  const T = cfg.blockSize;
  const logEvery = hooks.logEvery ?? 10;
  const evals: EvalInfo[] = [];
  let firstLoss = NaN;
  let step = 0;
  // One training step: captured and replayed by jit (the batch is made outside: its offsets
  // are host random numbers, its upload the step's arguments); the schedulers step outside too.
  const stepBody = (x: surf.Tensor, y: surf.Tensor): surf.Tensor => {
    opt.zeroGrad();
    const l = model.loss(x, y);
    l.backward();
    surf.optim.clipGradNorm(params, cfg.clip);
    opt.step();
    return l.detach();
  };
  const jitted = (cfg.jit ?? true) ? surf.jit(stepBody) : null;
  const trainStep = jitted ?? ((x: surf.Tensor, y: surf.Tensor) => surf.tidy(() => stepBody(x, y)));
  let t0 = performance.now(),
    tokens = 0;
  while (step < cfg.steps && !hooks.shouldStop?.()) {
    step++;
    const offsets = Array.from({ length: cfg.batchSize }, () => Math.floor(rand() * (data.train.length - T - 1)));
    const { x, y } = batchAt(data.train, offsets, T);
    const loss = trainStep(x, y);
    x.dispose();
    y.dispose();
    const lr = opt.paramGroups[0].lr;
    sched.step();
    tokens += cfg.batchSize * T;
    if (step === 1 || step % logEvery === 0 || step === cfg.steps) {
      const v = await loss.item();
      if (step === 1) firstLoss = v;
      const now = performance.now();
      hooks.onStep?.({ step, loss: v, lr, tokensPerSec: (tokens * 1000) / (now - t0) });
      t0 = now;
      tokens = 0;
    }
    loss.dispose();
    if (hooks.yieldEvery && step % hooks.yieldEvery === 0) await new Promise((r) => setTimeout(r, 0));
    if (step % cfg.evalEvery === 0 && step !== cfg.steps) {
      const e = { step, valLoss: await evaluate(model, data.val, cfg.evalBatches, cfg.batchSize) };
      evals.push(e);
      await hooks.onEval?.(e);
      t0 = performance.now();
    }
  }
  const valLoss = await evaluate(model, data.val, cfg.evalBatches, cfg.batchSize);
  const last = { step, valLoss };
  evals.push(last);
  await hooks.onEval?.(last);
  return { model, valLoss, steps: step, firstLoss, evals, jit: jitted ? jitted.stats : null };
}
