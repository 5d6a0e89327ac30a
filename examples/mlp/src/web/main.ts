import * as surf from '@surf/nn';
import { decodeSplit } from '../data/binary';
import { digitAt, MnistSplit, PIXELS, SIDE } from '../data/digits';
import { mulberry32 } from '../data/rng';
import { classify } from '../classify';
import { buildCnn, firstConv } from '../cnn-model';
import { drawFilters } from './filters';
import { train } from '../train';
import { renderBars } from './bars';
import { ChartData, drawChart } from './chart';
import { DrawingPad } from './pad';

/**
 * The browser page: trains the example's MLP or CNN with the same train() the CLI uses,
 * plotting loss and test accuracy as they come (and, for the CNN, its first-layer filters),
 * and classifies what is drawn on the pad.
 *
 * The state the end-to-end test reads is mirrored on window.__mlp (and the chart's series in
 * data attributes), so the test checks the numbers the page plots, not pixels.
 */
interface PageState {
  status: 'loading' | 'ready' | 'training' | 'stopped' | 'done' | 'error';
  backend: string;
  backendLine: string;
  series: ChartData;
  stepsPerSec: number;
  prediction: { digit: number; probs: number[] } | null;
  /** The CNN's first-layer weights as last drawn (flat [O, 1, 3, 3]) and after which step. */
  filters: { step: number; shape: number[]; values: number[] } | null;
  /** The same at the first draw (the initial weights), to compare. */
  filtersFirst: { step: number; shape: number[]; values: number[] } | null;
  model: 'mlp' | 'cnn';
  error: string | null;
}

declare global {
  interface Window {
    __mlp: PageState;
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const numParam = (k: string): number | undefined => (params.has(k) ? Number(params.get(k)) : undefined);

const state: PageState = {
  status: 'loading', backend: '', backendLine: '', series: { loss: [], accuracy: [] }, stepsPerSec: 0, prediction: null, filters: null, filtersFirst: null, model: 'mlp', error: null,
};
window.__mlp = state;

const chart = $<HTMLCanvasElement>('chart');
const startBtn = $<HTMLButtonElement>('start');
const stopBtn = $<HTMLButtonElement>('stop');
let model: surf.nn.Module | null = null;
let data: MnistSplit | null = null;
let stopRequested = false;

function setStatus(s: PageState['status'], text: string): void {
  state.status = s;
  document.body.dataset.status = s;
  $('status').textContent = text;
}

function redraw(): void {
  drawChart(chart, state.series);
  chart.dataset.loss = JSON.stringify(state.series.loss.map((p) => p.value));
  chart.dataset.accuracy = JSON.stringify(state.series.accuracy.map((p) => p.value));
}

// ---- prediction: one request at a time, the latest drawing wins ----

const pad = new DrawingPad($<HTMLCanvasElement>('pad'), () => schedulePredict());
let predicting = false;
let pending = false;

function showPreview(digit: Float32Array): void {
  const ctx = $<HTMLCanvasElement>('preview').getContext('2d')!;
  const img = ctx.createImageData(SIDE, SIDE);
  for (let i = 0; i < PIXELS; i++) {
    const v = Math.round(digit[i] * 255);
    img.data.set([v, v, v, 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

function schedulePredict(): void {
  if (predicting) {
    pending = true;
    return;
  }
  void predictNow();
}

async function predictNow(): Promise<void> {
  predicting = true;
  try {
    do {
      pending = false;
      const digit = pad.digit();
      showPreview(digit);
      if (!model || !pad.hasInk) {
        $('prediction').textContent = model ? 'Draw a digit.' : 'Train a little first, then draw a digit.';
        renderBars($('bars'), null);
        continue;
      }
      const probs = Array.from(await classify(model, digit));
      const best = probs.indexOf(Math.max(...probs));
      state.prediction = { digit: best, probs };
      const el = $('prediction');
      el.innerHTML = `Prediction: <b>${best}</b> (${(probs[best] * 100).toFixed(1)}%)`;
      el.dataset.digit = String(best);
      renderBars($('bars'), probs);
    } while (pending);
  } finally {
    predicting = false;
  }
}

$('clear').addEventListener('click', () => {
  pad.clear();
  state.prediction = null;
  delete $('prediction').dataset.digit;
  schedulePredict();
});

const pickRandom = mulberry32(Date.now() >>> 0);
$('sample').addEventListener('click', () => {
  if (!data) return;
  const i = Math.floor(pickRandom() * data.test.count);
  const img = digitAt(data.test, i);
  const c = $<HTMLCanvasElement>('pad');
  const tmp = document.createElement('canvas');
  tmp.width = SIDE;
  tmp.height = SIDE;
  const t = tmp.getContext('2d')!;
  const id = t.createImageData(SIDE, SIDE);
  for (let k = 0; k < PIXELS; k++) {
    const v = Math.round(img[k] * 255);
    id.data.set([v, v, v, 255], k * 4);
  }
  t.putImageData(id, 0, 0);
  pad.clear();
  const ctx = c.getContext('2d')!;
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tmp, 0, 0, c.width, c.height);
  pad.markInked();
  schedulePredict();
});

// ---- training ----

function readSettings() {
  const int = (id: string, fallback: number) => {
    const v = Number(($(id) as HTMLInputElement).value);
    return Number.isInteger(v) && v > 0 ? v : fallback;
  };
  const lr = Number(($('lr') as HTMLInputElement).value);
  const list = (id: string) => ($(id) as HTMLInputElement).value.split(',').map(Number).filter((h) => Number.isInteger(h) && h > 0);
  const hidden = list('hidden');
  const channels = list('channels');
  return {
    hidden: hidden.length ? hidden : [128], channels: channels.length ? channels.slice(0, 4) : [16, 32],
    batchSize: int('batch', 64), lr: lr > 0 ? lr : 2e-3, epochs: int('epochs', 5),
  };
}

// ---- the CNN's first-layer filters, read back while it trains (one read at a time) ----

let filtersBusy = false;

async function showFilters(step: number): Promise<void> {
  const conv = model ? firstConv(model) : null;
  if (!conv || filtersBusy) return;
  filtersBusy = true;
  // A copy taken now: the optimizer replaces the weight's storage while the read is in flight.
  const w = surf.noGrad(() => conv.weight.clone());
  try {
    const values = Array.from((await w.data()) as Float32Array);
    state.filters = { step, shape: [...w.shape], values };
    state.filtersFirst ??= state.filters;
    drawFilters($<HTMLCanvasElement>('filters'), Float32Array.from(values), w.shape);
  } finally {
    w.dispose();
    filtersBusy = false;
  }
}

function selectModel(m: string): void {
  state.model = m === 'cnn' ? 'cnn' : 'mlp';
  ($('model') as HTMLSelectElement).value = state.model;
  document.body.dataset.model = state.model;
}
$('model').addEventListener('change', () => selectModel(($('model') as HTMLSelectElement).value));

async function startTraining(): Promise<void> {
  if (!data) return;
  const s = readSettings();
  stopRequested = false;
  state.series = { loss: [], accuracy: [] };
  redraw();
  startBtn.disabled = true;
  stopBtn.disabled = false;
  setStatus('training', 'training…');
  const t0 = performance.now();
  let globalSteps = 0;
  // Each read is one batch's loss, which jumps around; the plot shows a moving average.
  let smoothed: number | undefined;
  try {
    const r = await train({
      data,
      ...s,
      build: state.model === 'cnn' ? () => buildCnn(s.channels, { rows: true }) : undefined,
      seed: numParam('seed') ?? 0,
      shift: numParam('shift'),
      logEvery: 5,
      evalEvery: numParam('evalEvery') ?? 25,
      maxStepsPerEpoch: numParam('steps'),
      yieldEvery: 1,
      shouldStop: () => stopRequested,
      onStart: (m) => {
        model?.parameters().forEach((p) => p.dispose());
        model = m;
        state.filters = null;
        state.filtersFirst = null;
        void showFilters(0);
      },
      onLoss: (p) => {
        globalSteps = p.globalStep;
        state.stepsPerSec = p.stepsPerSec;
        smoothed = smoothed === undefined ? p.loss : 0.7 * smoothed + 0.3 * p.loss;
        state.series.loss.push({ step: p.globalStep, value: smoothed });
        $('epoch').textContent = `${p.epoch}/${s.epochs}`;
        $('step').textContent = String(p.globalStep);
        $('rate').textContent = p.stepsPerSec.toFixed(1);
        $('loss').textContent = p.loss.toFixed(3);
        redraw();
        void showFilters(p.globalStep);
      },
      onEval: (p) => {
        state.series.accuracy.push({ step: p.globalStep, value: p.accuracy * 100 });
        $('acc').textContent = `${(p.accuracy * 100).toFixed(1)}%`;
        redraw();
        if (pad.hasInk) schedulePredict();
      },
    });
    while (filtersBusy) await new Promise((r) => setTimeout(r, 5));
    await showFilters(globalSteps);
    const secs = (performance.now() - t0) / 1000;
    setStatus(r.stopped ? 'stopped' : 'done', `${r.stopped ? 'stopped' : 'done'}: ${(r.testAccuracy * 100).toFixed(1)}% after ${globalSteps} steps, ${secs.toFixed(0)} s`);
  } catch (e) {
    state.error = (e as Error).message;
    setStatus('error', `error: ${(e as Error).message}`);
    throw e;
  } finally {
    startBtn.disabled = false;
    stopBtn.disabled = true;
  }
}

startBtn.addEventListener('click', () => void startTraining());
stopBtn.addEventListener('click', () => {
  stopRequested = true;
  stopBtn.disabled = true;
  $('status').textContent = 'stopping…';
});

// ---- start-up ----


async function boot(): Promise<void> {
  // Settings can come in the URL (?epochs=3&batch=32&hidden=256&lr=0.001), e.g. for links.
  // ?model=cnn&channels=16,32 picks the CNN.
  for (const id of ['hidden', 'channels', 'batch', 'lr', 'epochs']) if (params.has(id)) ($(id) as HTMLInputElement).value = params.get(id)!;
  selectModel(params.get('model') ?? 'mlp');
  redraw();
  renderBars($('bars'), null);
  const choice = params.get('backend');
  const info = await surf.init({ backend: choice === 'cpu' || choice === 'webgpu' ? choice : 'auto' });
  state.backend = info.backend;
  const el = $('backend');
  if (info.backend === 'webgpu') {
    state.backendLine = `WebGPU · ${info.description.replace(/^WebGPU:\s*/, '')}`;
  } else {
    // init('auto') skips a software WebGPU adapter (slower than the CPU backend) and says so.
    state.backendLine = !info.fallbackReason
      ? 'CPU backend (chosen by ?backend=cpu)'
      : /software emulation/.test(info.fallbackReason)
        ? "CPU backend: this browser's WebGPU adapter is a software emulation, slower than the CPU (?backend=webgpu forces it)"
        : 'CPU backend: WebGPU is not available in this browser, so training runs slower on the CPU';
    el.title = info.fallbackReason ?? '';
    el.classList.add('fallback');
  }
  el.textContent = state.backendLine;
  el.dataset.backend = info.backend;
  setStatus('loading', 'loading digits…');
  const res = await fetch('/mnist.bin');
  if (!res.ok) throw new Error(`GET /mnist.bin: ${res.status}`);
  data = decodeSplit(new Uint8Array(await res.arrayBuffer()));
  setStatus('ready', `ready: ${data.train.count} training and ${data.test.count} test digits`);
  startBtn.disabled = false;
  if (params.has('autostart')) void startTraining();
}

boot().catch((e: Error) => {
  state.error = e.message;
  setStatus('error', `error: ${e.message}`);
});
