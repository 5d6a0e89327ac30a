import { decodeSplit } from '../data/binary';
import { digitAt, MnistSplit, PIXELS, SIDE } from '../data/digits';
import { mulberry32 } from '../data/rng';
import { drawFilters } from './filters';
import { renderBars } from './bars';
import { ChartData, drawChart } from './chart';
import { DrawingPad } from './pad';
import type { FromWorker, ToWorker, TrainSettings, WorkerScope } from './protocol';

/**
 * The browser page's main thread: the controls, the loss/accuracy chart, the drawing pad and
 * the CNN's filters. Training, the model and Surf itself run in a module Web Worker
 * (worker.ts, served as /worker.js), so drawing and the chart stay smooth while it trains;
 * the two talk through the messages of protocol.ts (progress and metrics, filter weights to
 * draw, a prediction for each drawing).
 *
 * The state the end-to-end test reads is mirrored on window.__mlp (and the chart's series in
 * data attributes), so the test checks the numbers the page plots, not pixels.
 */
interface PageState {
  status: 'loading' | 'ready' | 'training' | 'stopped' | 'done' | 'error';
  backend: string;
  backendLine: string;
  /** Where training runs, as the worker reports it. */
  worker: WorkerScope | null;
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
  status: 'loading',
  backend: '',
  backendLine: '',
  worker: null,
  series: { loss: [], accuracy: [] },
  stepsPerSec: 0,
  prediction: null,
  filters: null,
  filtersFirst: null,
  model: 'mlp',
  error: null,
};
window.__mlp = state;

const chart = $<HTMLCanvasElement>('chart');
const startBtn = $<HTMLButtonElement>('start');
const stopBtn = $<HTMLButtonElement>('stop');
let data: MnistSplit | null = null;
/** The worker has a model (it started training once): predictions can be asked for. */
let hasModel = false;

function setStatus(s: PageState['status'], text: string): void {
  state.status = s;
  document.body.dataset.status = s;
  $('status').textContent = text;
}

function fail(message: string): void {
  state.error = message;
  setStatus('error', `error: ${message}`);
  startBtn.disabled = false;
  stopBtn.disabled = true;
}

function redraw(): void {
  drawChart(chart, state.series);
  chart.dataset.loss = JSON.stringify(state.series.loss.map((p) => p.value));
  chart.dataset.accuracy = JSON.stringify(state.series.accuracy.map((p) => p.value));
}

// ---- the worker ----

const worker = new Worker(new URL('/worker.js', location.href), { type: 'module' });
const send = (m: ToWorker, transfer: Transferable[] = []) => worker.postMessage(m, transfer);
/** One handler per reply type the boot sequence or a request is waiting for. */
const waiting = new Map<string, (m: FromWorker) => void>();
const nextReply = <T extends FromWorker['type']>(type: T) =>
  new Promise<Extract<FromWorker, { type: T }>>((resolve) => waiting.set(type, resolve as (m: FromWorker) => void));

worker.addEventListener('error', (e) => fail(`the training worker failed: ${e.message || 'it could not start'}`));
worker.addEventListener('message', (e: MessageEvent<FromWorker>) => onWorkerMessage(e.data));

// ---- prediction: one request at a time, the latest drawing wins ----

const pad = new DrawingPad($<HTMLCanvasElement>('pad'), () => schedulePredict());
let predicting = false;
let pending = false;
let predictId = 0;
const predictions = new Map<number, (probs: Float32Array | null) => void>();

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

/** The worker's class probabilities for a digit (null when it has no model yet). */
function askWorker(digit: Float32Array): Promise<Float32Array | null> {
  const id = ++predictId;
  const copy = Float32Array.from(digit);
  send({ type: 'predict', id, digit: copy }, [copy.buffer]);
  return new Promise((resolve) => predictions.set(id, resolve));
}

async function predictNow(): Promise<void> {
  predicting = true;
  try {
    do {
      pending = false;
      const digit = pad.digit();
      showPreview(digit);
      const probsArr = hasModel && pad.hasInk ? await askWorker(digit) : null;
      if (!probsArr) {
        $('prediction').textContent = hasModel ? 'Draw a digit.' : 'Train a little first, then draw a digit.';
        renderBars($('bars'), null);
        continue;
      }
      const probs = Array.from(probsArr);
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

// ---- training (in the worker; here its progress is shown) ----

function readSettings(): TrainSettings {
  const int = (id: string, fallback: number) => {
    const v = Number(($(id) as HTMLInputElement).value);
    return Number.isInteger(v) && v > 0 ? v : fallback;
  };
  const lr = Number(($('lr') as HTMLInputElement).value);
  const list = (id: string) =>
    ($(id) as HTMLInputElement).value
      .split(',')
      .map(Number)
      .filter((h) => Number.isInteger(h) && h > 0);
  const hidden = list('hidden');
  const channels = list('channels');
  return {
    model: state.model,
    hidden: hidden.length ? hidden : [128],
    channels: channels.length ? channels.slice(0, 4) : [16, 32],
    batchSize: int('batch', 64),
    lr: lr > 0 ? lr : 2e-3,
    epochs: int('epochs', 5),
    seed: numParam('seed') ?? 0,
    shift: numParam('shift'),
    evalEvery: numParam('evalEvery') ?? 25,
    maxStepsPerEpoch: numParam('steps'),
  };
}

function selectModel(m: string): void {
  state.model = m === 'cnn' ? 'cnn' : 'mlp';
  ($('model') as HTMLSelectElement).value = state.model;
  document.body.dataset.model = state.model;
}
$('model').addEventListener('change', () => selectModel(($('model') as HTMLSelectElement).value));

/** The run being shown: its settings, start time and loss smoothing. */
let run: { settings: TrainSettings; t0: number; smoothed?: number } | null = null;

function startTraining(): void {
  if (!data || run) return;
  const settings = readSettings();
  run = { settings, t0: performance.now() };
  state.series = { loss: [], accuracy: [] };
  redraw();
  startBtn.disabled = true;
  stopBtn.disabled = false;
  setStatus('training', 'training…');
  send({ type: 'train', settings });
}

function showFilters(step: number, shape: number[], values: Float32Array): void {
  state.filters = { step, shape, values: Array.from(values) };
  state.filtersFirst ??= state.filters;
  drawFilters($<HTMLCanvasElement>('filters'), values, shape);
}

function onWorkerMessage(m: FromWorker): void {
  const wait = waiting.get(m.type);
  if (wait) {
    waiting.delete(m.type);
    wait(m);
  }
  switch (m.type) {
    case 'started':
      hasModel = true;
      state.filters = null;
      state.filtersFirst = null;
      break;
    case 'loss': {
      if (!run) break;
      state.stepsPerSec = m.stepsPerSec;
      // Each read is one batch's loss, which jumps around; the plot shows a moving average.
      run.smoothed = run.smoothed === undefined ? m.loss : 0.7 * run.smoothed + 0.3 * m.loss;
      state.series.loss.push({ step: m.globalStep, value: run.smoothed });
      $('epoch').textContent = `${m.epoch}/${run.settings.epochs}`;
      $('step').textContent = String(m.globalStep);
      $('rate').textContent = m.stepsPerSec.toFixed(1);
      $('loss').textContent = m.loss.toFixed(3);
      redraw();
      break;
    }
    case 'eval':
      state.series.accuracy.push({ step: m.globalStep, value: m.accuracy * 100 });
      $('acc').textContent = `${(m.accuracy * 100).toFixed(1)}%`;
      redraw();
      if (pad.hasInk) schedulePredict();
      break;
    case 'filters':
      showFilters(m.step, m.shape, m.values);
      break;
    case 'done': {
      const secs = run ? (performance.now() - run.t0) / 1000 : 0;
      run = null;
      $('step').textContent = String(m.steps);
      setStatus(
        m.stopped ? 'stopped' : 'done',
        `${m.stopped ? 'stopped' : 'done'}: ${(m.testAccuracy * 100).toFixed(1)}% after ${m.steps} steps, ${secs.toFixed(0)} s`,
      );
      startBtn.disabled = false;
      stopBtn.disabled = true;
      break;
    }
    case 'prediction': {
      const resolve = predictions.get(m.id);
      predictions.delete(m.id);
      resolve?.(m.probs);
      break;
    }
    case 'error':
      run = null;
      fail(m.message);
      break;
  }
}

startBtn.addEventListener('click', () => startTraining());
stopBtn.addEventListener('click', () => {
  send({ type: 'stop' });
  stopBtn.disabled = true;
  $('status').textContent = 'stopping…';
});

// ---- start-up ----

async function boot(): Promise<void> {
  // Settings can come in the URL (?epochs=3&batch=32&hidden=256&lr=0.001), e.g. for links.
  // ?model=cnn&channels=16,32 picks the CNN.
  for (const id of ['hidden', 'channels', 'batch', 'lr', 'epochs'])
    if (params.has(id)) ($(id) as HTMLInputElement).value = params.get(id)!;
  selectModel(params.get('model') ?? 'mlp');
  redraw();
  renderBars($('bars'), null);
  const choice = params.get('backend');
  const ready = nextReply('ready');
  send({ type: 'init', backend: choice === 'cpu' || choice === 'webgpu' ? choice : 'auto' });
  const info = await ready;
  state.backend = info.backend;
  state.worker = info.where;
  const el = $('backend');
  if (info.backend === 'webgpu') {
    state.backendLine = `WebGPU · ${info.description.replace(/^WebGPU:\s*/, '')} (in a worker)`;
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
  const bytes = await res.arrayBuffer();
  data = decodeSplit(new Uint8Array(bytes));
  // The worker gets its own copy (structured clone): the page keeps its test digits for the sample button.
  const loaded = nextReply('loaded');
  send({ type: 'data', bytes });
  await loaded;
  setStatus('ready', `ready: ${data.train.count} training and ${data.test.count} test digits`);
  startBtn.disabled = false;
  if (params.has('autostart')) startTraining();
}

boot().catch((e: Error) => fail(e.message));
