import * as surf from '@surf/nn';
import { Backend, CpuBackend } from '@surf/core';
import { gpuBackend, testGpu } from './gpu';
import { bigram, bigramLoss } from '../src/bigram';
import { decode, detokenize, encode, splitSamples } from '../src/corpus';
import { loadBrown } from '../src/corpus-node';
import { Gpt } from '../src/model';
import { generate, rng, sampleFromLogits } from '../src/sample';
import { loadGpt, saveGpt } from '../src/saved-model';
import { DEFAULT_TRAIN, evaluate, trainGpt } from '../src/train';

// The GPT example's pieces: the corpus text, the bigram baseline's arithmetic, sampling, a
// short real training run on the CPU, save/load, and the model's forward on WebGPU against
// the CPU's.
const cpu = new CpuBackend();
beforeAll(() => {
  surf.setBackend(cpu);
});

test('Brown tags are stripped and tokens rejoined into prose', () => {
  const tagged =
    "\n\n\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ./.\n\n\n\tIt/pps 's/bez fine/jj ,/, (/( really/rb )/) !/.\n";
  expect(detokenize(tagged)).toBe('The jury said "no evidence".\nIt\'s fine, (really)!');
  const brown = loadBrown(3);
  expect(brown.map((s) => s.name)).toEqual(['ca01', 'ca02', 'ca03']);
  expect(
    brown[0].text.startsWith(
      'The Fulton County Grand Jury said Friday an investigation of Atlanta\'s recent primary election produced "no evidence" that any irregularities took place.',
    ),
  ).toBe(true);
});

test('every 10th sample is validation text; encode/decode round-trip', () => {
  const samples = Array.from({ length: 20 }, (_, i) => ({
    name: `s${String(i).padStart(2, '0')}`,
    text: i % 10 === 9 ? 'zz' : 'ab',
  }));
  const d = splitSamples(samples);
  expect(d.vocab).toEqual(['\n', 'a', 'b', 'z']);
  expect(d.valText).toBe('zz\nzz');
  expect(decode(d.vocab, d.train)).toBe(d.trainText);
  expect(() => encode(d.vocab, 'q')).toThrow(/"q" is not in the model's vocabulary/);
});

test('bigram loss is the smoothed count ratio, and the best alpha is chosen', () => {
  const train = Int32Array.from([0, 1, 0, 1, 1]);
  const c = new Float64Array([0, 2, 1, 1]); // counts of (0,0), (0,1), (1,0), (1,1)
  const want = -(Math.log(3 / 4) + Math.log(2 / 4)) / 2; // pairs (0,1) and (1,1), add-1
  expect(bigramLoss(c, 2, 1, Int32Array.from([0, 1, 1]))).toBeCloseTo(want, 12);
  const b = bigram(train, Int32Array.from([0, 1, 1]), 2, [1, 0.5]);
  expect(b.alpha).toBe(0.5);
  expect(b.valLoss).toBeCloseTo(-(Math.log(2.5 / 3) + Math.log(1.5 / 3)) / 2, 12);
});

test('sampling: top-k keeps the k best, temperature sharpens, frequencies follow softmax', () => {
  const r = rng(4);
  const logits = [Math.log(3), 0, -1, -2];
  for (let i = 0; i < 200; i++) expect(sampleFromLogits(logits, { topK: 1 }, r)).toBe(0);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++) counts[sampleFromLogits(logits, { topK: 2 }, r)]++;
  expect(counts[2] + counts[3]).toBe(0);
  expect(counts[0] / 4000).toBeGreaterThan(0.72);
  expect(counts[0] / 4000).toBeLessThan(0.78);
  let zeros = 0;
  for (let i = 0; i < 400; i++) if (sampleFromLogits(logits, { temperature: 0.05 }, r) === 0) zeros++;
  expect(zeros).toBe(400);
  expect(() => sampleFromLogits(logits, { temperature: 0 }, r)).toThrow(/temperature must be > 0/);
});

test('a short training run learns, and the saved model reloads with the same outputs', async () => {
  const data = splitSamples(loadBrown(10));
  const cfg = {
    ...DEFAULT_TRAIN,
    steps: 30,
    batchSize: 4,
    blockSize: 16,
    nEmbd: 16,
    nHead: 2,
    nLayer: 1,
    lr: 1e-2,
    warmup: 5,
    evalEvery: 1000,
    evalBatches: 2,
  };
  const r = await trainGpt(data, cfg);
  expect(r.firstLoss).toBeGreaterThan(Math.log(data.vocab.length) - 0.3);
  expect(r.valLoss).toBeLessThan(r.firstLoss - 0.8);
  const bytes = await saveGpt(r.model, data.vocab, { valLoss: String(r.valLoss) });
  const back = loadGpt(bytes);
  expect(back.vocab).toEqual(data.vocab);
  expect(await evaluate(back.model, data.val, 2, 4)).toBeCloseTo(r.valLoss, 5);
  const a = await generate(r.model, Array.from(encode(data.vocab, 'The ')), 12, { seed: 9, topK: 5 });
  const b = await generate(back.model, Array.from(encode(data.vocab, 'The ')), 12, { seed: 9, topK: 5 });
  expect(a).toHaveLength(12);
  expect(b).toEqual(a);
});

testGpu('the GPT forward (embeddings, fused attention, MLP, loss) on WebGPU matches the CPU', async () => {
  const gpu = await gpuBackend();
  try {
    const run = async (backend: Backend) => {
      surf.setBackend(backend);
      surf.manualSeed(2);
      const m = new Gpt({ vocabSize: 11, blockSize: 8, nEmbd: 8, nHead: 2, nLayer: 1, dropout: 0 });
      const ids = surf.tensor(Int32Array.from({ length: 16 }, (_, i) => (i * 7) % 11)).reshape([2, 8]);
      const logits = surf.noGrad(() => m.forward(ids));
      return {
        loss: await surf.noGrad(() => m.loss(ids.narrow(1, 0, 7), ids.narrow(1, 1, 7))).item(),
        g: Array.from(await logits.data()),
      };
    };
    const c = await run(cpu);
    const w = await run(gpu);
    expect(w.loss).toBeCloseTo(c.loss, 4);
    w.g.forEach((v, i) => expect(Math.abs(v - c.g[i])).toBeLessThan(1e-4 + 1e-3 * Math.abs(c.g[i])));
  } finally {
    surf.setBackend(cpu);
    gpu.destroy();
  }
});
