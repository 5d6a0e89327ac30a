import * as surf from '@surf/nn';
import { bigram } from '../bigram';
import { CharData, decode, encode, splitSamples } from '../corpus';
import { generate } from '../sample';
import { DEFAULT_TRAIN, TrainConfig, trainGpt } from '../train';
import { LossSeries, drawLoss } from './chart';

/**
 * The browser page: trains the example's GPT with the same trainGpt() the CLI uses on WebGPU
 * (the CPU backend when the browser has none), plotting training and validation loss against
 * the bigram baseline and writing out a sample after each validation. Its state is mirrored
 * on window.__gpt for the end-to-end test.
 */
interface PageState {
  status: 'loading' | 'ready' | 'training' | 'done' | 'error';
  backend: string;
  series: LossSeries;
  samples: string[];
  error: string | null;
}

declare global {
  interface Window {
    __gpt: PageState;
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const state: PageState = {
  status: 'loading',
  backend: '',
  series: { train: [], val: [], bigram: null },
  samples: [],
  error: null,
};
window.__gpt = state;
let data: (CharData & { valText: string }) | null = null;
let stop = false;

function setStatus(s: PageState['status'], text: string): void {
  state.status = s;
  document.body.dataset.status = s;
  $('status').textContent = text;
}

const redraw = () => drawLoss($<HTMLCanvasElement>('chart'), state.series);

/** Inputs start from the defaults or the URL (?steps=..&layers=..); the URL wins. */
function config(): TrainConfig {
  const num = (id: string, key: keyof TrainConfig) => {
    const v = Number(params.get(id) ?? $<HTMLInputElement>(id)?.value ?? DEFAULT_TRAIN[key]);
    if (!Number.isFinite(v) || v <= 0) throw new surf.ValueError(`${id} must be a positive number`);
    return v;
  };
  return {
    ...DEFAULT_TRAIN,
    steps: num('steps', 'steps'),
    nLayer: num('layers', 'nLayer'),
    nEmbd: num('embd', 'nEmbd'),
    blockSize: num('block', 'blockSize'),
    batchSize: num('batch', 'batchSize'),
    lr: num('lr', 'lr'),
    nHead: Number(params.get('heads') ?? 4),
    evalEvery: Number(params.get('evalEvery') ?? 100),
    evalBatches: Number(params.get('evalBatches') ?? 4),
  };
}

async function run(): Promise<void> {
  if (!data) return;
  const cfg = config();
  stop = false;
  state.series = { ...state.series, train: [], val: [] };
  state.samples = [];
  $<HTMLButtonElement>('start').disabled = true;
  $<HTMLButtonElement>('stop').disabled = false;
  setStatus(
    'training',
    `training ${cfg.nLayer} layers × ${cfg.nEmbd} wide, context ${cfg.blockSize}, batch ${cfg.batchSize}…`,
  );
  const d = data;
  let model: Parameters<typeof generate>[0] | null = null;
  const r = await trainGpt(d, cfg, {
    logEvery: 5,
    yieldEvery: 1,
    shouldStop: () => stop,
    onStep: (s) => {
      state.series.train.push({ step: s.step, value: s.loss });
      $('step').textContent = String(s.step);
      $('loss').textContent = s.loss.toFixed(3);
      $('rate').textContent = String(Math.round(s.tokensPerSec));
      redraw();
    },
    onEval: async (e) => {
      state.series.val.push({ step: e.step, value: e.valLoss });
      $('val').textContent = e.valLoss.toFixed(3);
      redraw();
    },
  });
  model = r.model;
  // One sample from the trained model, written out character by character.
  const out = $('sample');
  out.textContent = 'The';
  const ids = await generate(model, Array.from(encode(d.vocab, 'The')), Number(params.get('sampleLength') ?? 300), {
    temperature: 0.8,
    topK: 20,
    seed: 1,
  });
  const text = `The${decode(d.vocab, ids)}`;
  out.textContent = text;
  state.samples.push(text);
  setStatus(
    'done',
    `done: validation ${r.valLoss.toFixed(3)} nats/char after ${r.steps} steps (bigram ${state.series.bigram?.toFixed(3)})`,
  );
  $<HTMLButtonElement>('start').disabled = false;
  $<HTMLButtonElement>('stop').disabled = true;
}

async function main(): Promise<void> {
  let line: string;
  try {
    const r = await surf.init({ backend: 'webgpu' });
    state.backend = r.backend;
    line = `WebGPU · ${r.description.replace(/^WebGPU:\s*/, '')}`;
  } catch (e) {
    await surf.init({ backend: 'cpu' });
    state.backend = 'cpu';
    line = `CPU backend (WebGPU is not available here: ${(e as Error).message})`;
    $('backend').classList.add('fallback');
  }
  $('backend').textContent = line;
  const samples = (await (await fetch('/corpus.json')).json()) as { name: string; text: string }[];
  const limit = Number(params.get('samples') ?? samples.length);
  data = splitSamples(samples.slice(0, limit));
  const bg = bigram(data.train, data.val, data.vocab.length);
  state.series.bigram = bg.valLoss;
  $('bigram').textContent = bg.valLoss.toFixed(3);
  setStatus(
    'ready',
    `${data.train.length.toLocaleString()} training and ${data.val.length.toLocaleString()} validation characters, ${data.vocab.length} distinct`,
  );
  $<HTMLButtonElement>('start').disabled = false;
  $<HTMLButtonElement>('start').onclick = () => void run().catch(fail);
  $<HTMLButtonElement>('stop').onclick = () => {
    stop = true;
  };
  redraw();
  if (params.has('autostart')) await run();
}

function fail(e: Error): void {
  state.error = e.message;
  setStatus('error', `error: ${e.message}`);
}

main().catch(fail);
