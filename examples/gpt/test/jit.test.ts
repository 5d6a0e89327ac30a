import * as surf from '@surf/nn';
import { Backend, CpuBackend } from '@surf/core';
import { gpuBackend, testGpu } from './gpu';
import { splitSamples } from '../src/corpus';
import { loadBrown } from '../src/corpus-node';
import { DEFAULT_TRAIN, TrainConfig, trainGpt } from '../src/train';

// The GPT example's training step under jit (AdamW in two groups, warmup then cosine,
// clipGradNorm, MultiheadAttention's fused attention and its backward, Dropout's masks, a
// validation pass in eval mode between steps) against the same run's eager step.
const cpu = new CpuBackend();
const data = splitSamples(loadBrown(3));
const cfg: TrainConfig = {
  ...DEFAULT_TRAIN,
  steps: 6,
  batchSize: 2,
  blockSize: 8,
  nEmbd: 8,
  nHead: 2,
  nLayer: 1,
  dropout: 0.1,
  warmup: 2,
  evalEvery: 3,
  evalBatches: 1,
};

async function run(backend: Backend, jit: boolean, dropout = cfg.dropout) {
  surf.setBackend(backend);
  const losses: number[] = [];
  const r = await trainGpt(data, { ...cfg, dropout, jit }, { logEvery: 1, onStep: (s) => losses.push(s.loss) });
  const params = await Promise.all(r.model.parameters().map(async (p) => Array.from(await p.data())));
  return { losses, valLosses: r.evals.map((e) => e.valLoss), params, stats: r.jit };
}

// Dropout 0 trains through the fused attention contract op; dropout 0.1 through the composite
// formula, whose masks come from the random stream.
test.each([0, 0.1])(
  'jit: the GPT training step (dropout %p) records, replays and equals the eager step bit for bit on the CPU',
  async (dropout) => {
    const want = await run(cpu, false, dropout);
    const got = await run(cpu, true, dropout);
    expect(want.stats).toBeNull();
    // AdamW's first step makes its moments: calls 2 and 3 line up, 4-6 replay.
    expect(got.stats).toEqual({ recorded: 3, replayed: 3, signatures: 1, records: 1 });
    expect(got.losses).toEqual(want.losses);
    expect(got.valLosses).toEqual(want.valLosses);
    expect(got.params).toEqual(want.params);
  },
);

testGpu('jit: the GPT training step on WebGPU (fused attention) equals its eager step (1e-5)', async () => {
  const gpu = await gpuBackend();
  try {
    const want = await run(gpu, false, 0);
    const got = await run(gpu, true, 0);
    expect(got.stats).toEqual({ recorded: 3, replayed: 3, signatures: 1, records: 1 });
    const near = (a: number, b: number, what: string) => {
      if (!(Math.abs(a - b) <= 1e-5 * (1 + Math.abs(b)))) throw new Error(`${what}: jit ${a}, eager ${b}`);
    };
    got.losses.forEach((v, i) => near(v, want.losses[i], `loss ${i}`));
    got.valLosses.forEach((v, i) => near(v, want.valLosses[i], `validation loss ${i}`));
    got.params.forEach((p, i) => p.forEach((v, j) => near(v, want.params[i][j], `param ${i}[${j}]`)));
  } finally {
    surf.setBackend(cpu);
    gpu.destroy();
  }
});

test('npm run gpt captures the step by default; --no-jit keeps the eager step', async () => {
  const { parseArgs, helpText } = await import('../src/args');
  expect(parseArgs([]).train.jit).toBeUndefined();
  expect(parseArgs(['--no-jit']).train.jit).toBe(false);
  expect(helpText()).toMatch(/--no-jit/);
});
