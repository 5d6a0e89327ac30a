/**
 * The rows of the suite: what each measures, at full size (the GPU host) and in --quick mode
 * (SwiftShader or CPU boxes). Every framework runs the same row list; bench/torch/bench.py
 * receives it as JSON.
 */
import type { MatmulSpec } from './data';
import { ZOO, ZooModel, ZooOptimizer } from './zoo/models';

export type Group =
  'matmul' | 'reduce' | 'elementwise' | 'overhead' | 'attention' | 'conv' | 'train' | 'models' | 'zoo' | 'cpu';
export const GROUPS: readonly Group[] = [
  'matmul',
  'reduce',
  'elementwise',
  'overhead',
  'attention',
  'conv',
  'train',
  'models',
  'zoo',
  'cpu',
];

export type Unit = 'GFLOP/s' | 'GB/s' | 'µs/op' | 'steps/s' | 'tokens/s';

interface RowBase {
  /** Stable key, e.g. 'matmul/1024' (used in JSON and by bench.py). */
  id: string;
  group: Group;
  label: string;
  unit: Unit;
  /** Device class: 'gpu' rows compare WebGPU frameworks (and PyTorch CUDA), 'cpu' rows CPU ones. */
  device: 'gpu' | 'cpu';
}

export interface MatmulRow extends RowBase {
  kind: 'matmul';
  spec: MatmulSpec;
}
/** Sum of a [rows, cols] matrix: everything (axis null), over the first axis (0) or the last (1). */
export interface SumRow extends RowBase {
  kind: 'sum';
  rows: number;
  cols: number;
  axis: 0 | 1 | null;
}
/** out = a*b + c on [rows, cols]; `permuted`: a is a transposed view of a [cols, rows] buffer. */
export interface FmaRow extends RowBase {
  kind: 'fma';
  rows: number;
  cols: number;
  permuted: boolean;
}
/** `ops` dependent elementwise adds on `size` elements, one sync at the end. */
export interface OverheadRow extends RowBase {
  kind: 'overhead';
  ops: number;
  size: number;
}
export interface TrainRow extends RowBase {
  kind: 'train';
  /** Layer widths, e.g. [784, 128, 10]; ReLU between layers, cross-entropy on the logits. */
  layers: number[];
  batch: number;
  optimizer: 'sgd' | 'adam';
  lr: number;
  /** Read the loss back to the host after every step (the usual training loop with logging). */
  readback: boolean;
  /**
   * How Surf writes the loop (peers: see each row's note): 'tidy' the documented loop inside
   * `tidy`; 'jit' the step captured by `jit` (PyTorch: the whole step in one CUDA graph);
   * 'notidy' the loop PyTorch users write, no tidy or dispose (PyTorch: its eager loop).
   */
  loop: TrainLoop;
  /** With readback false: read the loss every `readEvery` steps (0: only the final sync). */
  readEvery: number;
  /** Dropout with this p after every hidden ReLU (absent: none). */
  dropout?: number;
}
export type TrainLoop = 'tidy' | 'jit' | 'notidy';

/**
 * Attention forward + backward (causal, f32, q/k/v [batch, heads, len, dim]): 'fused' is
 * scaledDotProductAttention (PyTorch: F.scaled_dot_product_attention), 'plain' the composite
 * softmax(QKᵀ·scale + causal mask)·V every framework can write.
 */
export interface AttentionRow extends RowBase {
  kind: 'attention';
  impl: 'fused' | 'plain';
  batch: number;
  heads: number;
  len: number;
  dim: number;
  causal: boolean;
}

/** The GPT example's training step (examples/gpt's default model; AdamW, clipping, warmup + cosine lr). */
export interface GptRow extends RowBase {
  kind: 'gpt';
  config: GptBenchConfig;
  /** Read the loss every `readEvery` steps, as the example logs. */
  readEvery: number;
  /** Surf's step captured and replayed with jit, as the example trains by default (PyTorch stays eager). */
  jit: boolean;
}
export interface GptBenchConfig {
  vocabSize: number;
  blockSize: number;
  nEmbd: number;
  nHead: number;
  nLayer: number;
  batchSize: number;
  lr: number;
  warmup: number;
  /** Steps of the cosine schedule after the warm-up (the example's default run length). */
  steps: number;
  weightDecay: number;
  clip: number;
  betas: [number, number];
  /** Where the numbers come from (the example's DEFAULT_TRAIN, or the fallback copy). */
  source: string;
}

/**
 * A small CNN training step (examples/cnn's architecture: blocks of conv 3x3 pad 1 (no bias),
 * BatchNorm2d, ReLU, max pool 2x2, then one linear layer) on [batch, 1, 28, 28] digits, Adam.
 */
export interface CnnRow extends RowBase {
  kind: 'cnn';
  channels: number[];
  batch: number;
  lr: number;
  /** Surf's step captured and replayed with jit, as the example trains by default (PyTorch stays eager). */
  jit: boolean;
}
/** The MNIST example's own training loop (examples/mlp/src/train.ts), `steps` steps of its first epoch (125 = all of it at batch 64). */
export interface ExampleRow extends RowBase {
  kind: 'example';
  steps: number;
}

/**
 * Issue 13's kernel rows, forward + backward on x [batch, channels, size, size]: conv2d with
 * a [outChannels, channels, kernel, kernel] weight, stride 1, `padding`, no bias (data and
 * weight gradients); or maxPool2d with a kernel x kernel window, stride = kernel.
 */
export interface ConvRow extends RowBase {
  kind: 'conv';
  op: 'conv2d' | 'maxPool2d';
  batch: number;
  channels: number;
  size: number;
  outChannels: number;
  kernel: number;
  padding: number;
}

/** A zoo model's training step (bench/src/zoo/models.ts): 'eager' the plain loop, 'jit' under surf.jit. */
export interface ZooRow extends RowBase {
  kind: 'zoo';
  name: string;
  model: ZooModel;
  optimizer: ZooOptimizer;
  loop: 'eager' | 'jit';
}

/** `size` random float32 values per iteration from the framework's seeded generator (randn / rand). */
export interface RandomRow extends RowBase {
  kind: 'random';
  dist: 'normal' | 'uniform';
  size: number;
}

export type Row =
  | MatmulRow
  | SumRow
  | FmaRow
  | OverheadRow
  | TrainRow
  | ExampleRow
  | AttentionRow
  | GptRow
  | CnnRow
  | ConvRow
  | ZooRow
  | RandomRow;

/** The output side of a conv row (stride 1 conv; stride = kernel pool). */
export function convOutSize(r: ConvRow): number {
  return r.op === 'conv2d' ? r.size + 2 * r.padding - r.kernel + 1 : Math.floor(r.size / r.kernel);
}

/**
 * Work of a conv row: conv2d FLOPs 2·N·O·Ho·Wo·C·k² forward, 3x that with the data and weight
 * gradients; maxPool2d bytes: x read and dx written (4 B each per input element), y written
 * and dy read (per output element).
 */
export function convWork(r: ConvRow): number {
  const o = convOutSize(r);
  if (r.op === 'conv2d') return 3 * 2 * r.batch * r.outChannels * o * o * r.channels * r.kernel * r.kernel;
  return 4 * r.batch * r.channels * (2 * r.size * r.size + 2 * o * o);
}

/** Whether step i of a training row reads its loss back to the host. */
export function readsLoss(row: { readback?: boolean; readEvery: number }, i: number): boolean {
  if (row.readback) return true;
  return row.readEvery > 0 && i % row.readEvery === row.readEvery - 1;
}

/**
 * FLOPs of attention's matmuls, FlashAttention's convention: forward 4·B·H·L·S·E (halved when
 * causal), backward 2.5x forward, so forward + backward is 3.5x.
 */
export function attentionFlops(r: AttentionRow): number {
  return 3.5 * 4 * r.batch * r.heads * r.len * r.len * r.dim * (r.causal ? 0.5 : 1);
}

/** The work one iteration does, in the row's unit's numerator (FLOP, bytes) or 1. */
export function workPerIter(row: Row): number {
  switch (row.kind) {
    case 'matmul':
      return 2 * row.spec.m * row.spec.k * row.spec.n;
    case 'sum':
      return 4 * row.rows * row.cols;
    case 'fma':
      return 4 * 4 * row.rows * row.cols;
    case 'overhead':
      return 1;
    case 'train':
      return 1;
    case 'example':
      return 1;
    case 'attention':
      return attentionFlops(row);
    case 'gpt':
      return row.config.batchSize * row.config.blockSize;
    case 'cnn':
      return 1;
    case 'conv':
      return convWork(row);
    case 'zoo':
      return 1;
    case 'random':
      return 4 * row.size; // bytes written
  }
}

/** Converts seconds per iteration to the row's unit (an overhead row's iteration is one op). */
export function toUnit(row: Row, secondsPerIter: number): number {
  switch (row.unit) {
    case 'GFLOP/s':
      return workPerIter(row) / secondsPerIter / 1e9;
    case 'GB/s':
      return workPerIter(row) / secondsPerIter / 1e9;
    case 'µs/op':
      return secondsPerIter * 1e6;
    case 'steps/s':
      return 1 / secondsPerIter;
    case 'tokens/s':
      return workPerIter(row) / secondsPerIter;
  }
}

export function higherIsBetter(unit: Unit): boolean {
  return unit !== 'µs/op';
}

/** Bytes of device input one iteration reads (for choosing how many input sets to rotate). */
export function inputBytes(row: Row): number {
  switch (row.kind) {
    case 'matmul':
      return 4 * row.spec.k * (row.spec.m + row.spec.n);
    case 'sum':
      return 4 * row.rows * row.cols;
    case 'fma':
      return 12 * row.rows * row.cols;
    default:
      return Infinity;
  }
}

function mm(
  m: number,
  k: number,
  n: number,
  ta = false,
  tb = false,
  device: 'gpu' | 'cpu' = 'gpu',
  note = '',
): MatmulRow {
  const square = m === k && k === n && !ta && !tb;
  const label = square
    ? `matmul ${m}³`
    : `matmul ${m}x${k}x${n}${ta ? ' Aᵀ' : ''}${tb ? ' Bᵀ' : ''}${note ? ` (${note})` : ''}`;
  const id = `${device === 'cpu' ? 'cpu/' : ''}matmul/${square ? m : `${m}x${k}x${n}${ta ? 'tA' : ''}${tb ? 'tB' : ''}`}`;
  return {
    id,
    group: device === 'cpu' ? 'cpu' : 'matmul',
    label,
    unit: 'GFLOP/s',
    device,
    kind: 'matmul',
    spec: { m, k, n, ta, tb },
  };
}

function sumRow(rows: number, cols: number, axis: 0 | 1 | null): SumRow {
  const n = rows * cols;
  const mega = n / 2 ** 20;
  if (axis === null)
    return {
      id: `reduce/sum-${mega}M`,
      group: 'reduce',
      label: `sum all ${mega}M`,
      unit: 'GB/s',
      device: 'gpu',
      kind: 'sum',
      rows,
      cols,
      axis,
    };
  return {
    id: `reduce/sum-${rows}x${cols}-axis${axis}`,
    group: 'reduce',
    label: `sum [${rows}x${cols}] over ${axis === 1 ? 'last' : 'first'} axis`,
    unit: 'GB/s',
    device: 'gpu',
    kind: 'sum',
    rows,
    cols,
    axis,
  };
}

function fmaRow(side: number, permuted: boolean): FmaRow {
  const mega = (side * side) / 2 ** 20;
  return {
    id: `elementwise/fma-${mega}M${permuted ? '-permuted' : ''}`,
    group: 'elementwise',
    label: `a*b+c ${mega}M${permuted ? ' (a permuted view)' : ''}`,
    unit: 'GB/s',
    device: 'gpu',
    kind: 'fma',
    rows: side,
    cols: side,
    permuted,
  };
}

const LOOP_LABEL: Record<TrainLoop, string> = { tidy: '', jit: ', jit', notidy: ', no tidy, loss read every 10 steps' };

function trainRow(
  layers: number[],
  batch: number,
  optimizer: 'sgd' | 'adam',
  readback: boolean,
  device: 'gpu' | 'cpu' = 'gpu',
  loop: TrainLoop = 'tidy',
  dropout?: number,
): TrainRow {
  const lr = optimizer === 'sgd' ? 0.1 : 1e-3;
  const name = `MLP ${layers.join('-')} b${batch} ${optimizer === 'sgd' ? 'SGD' : 'Adam'}${dropout ? ` + Dropout ${dropout}` : ''}`;
  const readEvery = loop === 'notidy' ? 10 : 0;
  return {
    id: `${device === 'cpu' ? 'cpu/' : ''}train/${layers.join('-')}-b${batch}-${optimizer}${dropout ? `-dropout${dropout}` : ''}${readback ? '-readback' : ''}${loop === 'tidy' ? '' : `-${loop}`}`,
    group: device === 'cpu' ? 'cpu' : 'train',
    label: `${name}${readback ? ', loss read every step' : loop === 'notidy' ? '' : ', sync at end'}${LOOP_LABEL[loop]}${loop === 'jit' && device === 'gpu' ? ' (PyTorch: CUDA graph)' : ''}`,
    unit: 'steps/s',
    device,
    kind: 'train',
    layers,
    batch,
    optimizer,
    lr,
    readback,
    loop,
    readEvery,
    ...(dropout ? { dropout } : {}),
  };
}

function attentionRow(impl: 'fused' | 'plain', batch: number, heads: number, len: number, dim: number): AttentionRow {
  const shape = `[${batch}, ${heads}, ${len}, ${dim}]`;
  return {
    id: `attention/${impl}-${batch}x${heads}x${len}x${dim}-causal`,
    group: 'attention',
    label: `attention fwd+bwd ${shape} causal, ${impl === 'fused' ? 'fused (PyTorch: SDPA)' : 'plain softmax(QKᵀ)V'}`,
    unit: 'GFLOP/s',
    device: 'gpu',
    kind: 'attention',
    impl,
    batch,
    heads,
    len,
    dim,
    causal: true,
  };
}

/**
 * examples/gpt's DEFAULT_TRAIN as of this suite (4 layers, 128 wide, 4 heads, context 128,
 * batch 32) and the Brown corpus's vocabulary size: used when the example's own defaults
 * cannot be loaded (suite.ts passes them in otherwise).
 */
export const GPT_FALLBACK: GptBenchConfig = {
  vocabSize: 85,
  blockSize: 128,
  nEmbd: 128,
  nHead: 4,
  nLayer: 4,
  batchSize: 32,
  lr: 2e-3,
  warmup: 100,
  steps: 3000,
  weightDecay: 0.1,
  clip: 1,
  betas: [0.9, 0.99],
  source: 'bench/src/rows.ts GPT_FALLBACK',
};

function gptRow(config: GptBenchConfig, quick: boolean, jit: boolean): GptRow {
  // --quick: a narrower, shallower model with a short context (SwiftShader/CPU boxes).
  const c = quick ? { ...config, nLayer: 1, nEmbd: 32, nHead: 2, blockSize: 32, batchSize: 8 } : config;
  return {
    id: `models/gpt-train${jit ? '-jit' : ''}`,
    group: 'models',
    label: `GPT training step (examples/gpt: ${c.nLayer} layers, ${c.nEmbd} wide, context ${c.blockSize}, batch ${c.batchSize})${jit ? ', Surf under jit' : ''}`,
    unit: 'tokens/s',
    device: 'gpu',
    kind: 'gpt',
    config: c,
    readEvery: 10,
    jit,
  };
}

function convRow(
  op: 'conv2d' | 'maxPool2d',
  batch: number,
  channels: number,
  size: number,
  outChannels: number,
  kernel: number,
  padding: number,
): ConvRow {
  const shape = `[${batch}, ${channels}, ${size}, ${size}]`;
  const what =
    op === 'conv2d'
      ? `conv2d fwd+bwd ${shape} ${kernel}x${kernel} pad ${padding} -> ${outChannels} channels`
      : `maxPool2d ${kernel}x${kernel} fwd+bwd ${shape}`;
  return {
    id: `conv/${op}-${batch}x${channels}x${size}x${size}-k${kernel}${op === 'conv2d' ? `-o${outChannels}` : ''}`,
    group: 'conv',
    label: what,
    unit: op === 'conv2d' ? 'GFLOP/s' : 'GB/s',
    device: 'gpu',
    kind: 'conv',
    op,
    batch,
    channels,
    size,
    outChannels,
    kernel,
    padding,
  };
}

function cnnRow(batch: number, channels: number[], jit: boolean): CnnRow {
  return {
    id: `models/cnn-train-b${batch}${channels.join('-') === '16-32' ? '' : `-c${channels.join('-')}`}${jit ? '-jit' : ''}`,
    group: 'models',
    label: `CNN training step (examples/cnn: conv-BN-ReLU-pool [${channels.join(', ')}], linear) b${batch} Adam${jit ? ', Surf under jit' : ''}`,
    unit: 'steps/s',
    device: 'gpu',
    kind: 'cnn',
    channels,
    batch,
    lr: 1e-3,
    jit,
  };
}

/** The MLP's own matmuls: forward, and the two backward products of each layer. */
function mlpShapes(device: 'gpu' | 'cpu' = 'gpu'): MatmulRow[] {
  return [
    mm(256, 784, 512, false, false, device, 'MLP fwd 1'),
    mm(256, 512, 10, false, false, device, 'MLP fwd 2'),
    mm(784, 256, 512, true, false, device, 'MLP dW1 = xᵀ·dh'),
    mm(256, 512, 784, false, true, device, 'MLP dx = dh·W1ᵀ'),
    mm(512, 256, 10, true, false, device, 'MLP dW2 = hᵀ·dy'),
    mm(256, 10, 512, false, true, device, 'MLP dh = dy·W2ᵀ'),
  ];
}

export interface RowOptions {
  /** The GPT example's training config (from its DEFAULT_TRAIN); GPT_FALLBACK when absent. */
  gpt?: GptBenchConfig;
}

export function buildRows(quick: boolean, opts: RowOptions = {}): Row[] {
  const squares = quick ? [128, 256, 512] : [128, 256, 512, 1024, 2048, 4096];
  const rows: Row[] = [];
  for (const s of squares) rows.push(mm(s, s, s));
  rows.push(...mlpShapes());

  const fulls = quick ? [1, 4] : [1, 16, 64];
  for (const m of fulls) rows.push(sumRow(m * 1024, 1024, null));
  const side = quick ? 1024 : 4096;
  rows.push(sumRow(side, side, 1), sumRow(side, side, 0));

  const fside = quick ? 1024 : 4096;
  rows.push(fmaRow(fside, false), fmaRow(fside, true));

  rows.push({
    id: 'overhead/add-chain',
    group: 'overhead',
    label: `dispatch: ${quick ? 200 : 1000} dependent adds on 1K elements`,
    unit: 'µs/op',
    device: 'gpu',
    kind: 'overhead',
    ops: quick ? 200 : 1000,
    size: 1024,
  });

  // Issue 14: fused attention against PyTorch's SDPA, and the composite every framework can write.
  const [ab, ah, al, ad] = quick ? [1, 2, 128, 32] : [16, 8, 1024, 64];
  rows.push(attentionRow('fused', ab, ah, al, ad), attentionRow('plain', ab, ah, al, ad));

  // Issue 13: a ResNet layer, a 5x5 conv and a max pool.
  if (quick)
    rows.push(
      convRow('conv2d', 2, 8, 16, 8, 3, 1),
      convRow('conv2d', 2, 4, 12, 8, 5, 2),
      convRow('maxPool2d', 2, 8, 16, 8, 2, 0),
    );
  else
    rows.push(
      convRow('conv2d', 64, 64, 56, 64, 3, 1),
      convRow('conv2d', 128, 32, 28, 64, 5, 2),
      convRow('maxPool2d', 64, 64, 56, 64, 2, 0),
    );

  // --quick shrinks the big MLP (SwiftShader takes seconds per step of the full one).
  const big = quick ? [784, 256, 256, 10] : [784, 512, 512, 10];
  const bigBatch = quick ? 128 : 256;
  for (const readback of [false, true]) {
    rows.push(trainRow([784, 128, 10], 64, 'sgd', readback));
    rows.push(trainRow(big, bigBatch, 'adam', readback));
  }
  // Issue 12: the captured step (PyTorch: the step in one CUDA graph), synced at the end and
  // reading the loss every step, and the loop without tidy. (Ids as the jit and eagermem
  // helpers' rows, so their branches' rows and these are the same rows.)
  for (const readback of [false, true]) {
    rows.push(trainRow([784, 128, 10], 64, 'sgd', readback, 'gpu', 'jit'));
    rows.push(trainRow(big, bigBatch, 'adam', readback, 'gpu', 'jit'));
  }
  rows.push(trainRow([784, 128, 10], 64, 'sgd', false, 'gpu', 'notidy'));
  rows.push(trainRow(big, bigBatch, 'adam', false, 'gpu', 'notidy'));
  // Random numbers at device speed: the MLP with Dropout against the same MLP without
  // (the step Dropout costs), under jit and as the plain loop; randn of 1M elements.
  for (const loop of ['jit', 'notidy'] as const)
    for (const p of [undefined, 0.1]) rows.push(trainRow([1000, 300, 100, 10], 100, 'adam', false, 'gpu', loop, p));
  rows.push({
    id: 'random/randn-1M',
    group: 'elementwise',
    label: 'randn of 1M float32 (seeded generator)',
    unit: 'GB/s',
    device: 'gpu',
    kind: 'random',
    dist: 'normal',
    size: 2 ** 20,
  });
  // Issues 13 and 14: the examples' models, Surf against PyTorch eager; Surf's step eager and
  // under jit (the examples train with jit by default).
  for (const jit of [false, true]) {
    rows.push(gptRow(opts.gpt ?? GPT_FALLBACK, quick, jit));
    // --quick: SwiftShader takes minutes for the full CNN's steps.
    rows.push(quick ? cnnRow(8, [4, 8], jit) : cnnRow(64, [16, 32], jit));
  }
  // The CNN example's GPU default (channels 32, 64; batch 32), as it trains: under jit.
  if (!quick) rows.push(cnnRow(32, [32, 64], true));
  rows.push({
    id: 'train/mnist-example',
    group: 'train',
    label: 'MNIST example (examples/mlp) training loop',
    unit: 'steps/s',
    device: 'gpu',
    kind: 'example',
    steps: quick ? 20 : 125,
  });

  // The zoo: plain-written models in varied shapes, eager and under jit (PyTorch: eager, and
  // the whole step in a CUDA graph for the jit rows).
  for (const z of ZOO)
    for (const loop of ['eager', 'jit'] as const)
      rows.push({
        id: `zoo/${z.name}${loop === 'jit' ? '-jit' : ''}`,
        group: 'zoo',
        label: `${z.label}${loop === 'jit' ? ', jit' : ''}`,
        unit: 'steps/s',
        device: 'gpu',
        kind: 'zoo',
        name: z.name,
        model: quick ? z.quick : z.model,
        optimizer: z.optimizer,
        loop,
      });

  rows.push(trainRow([784, 128, 10], 64, 'sgd', false, 'cpu'));
  rows.push(trainRow([784, 128, 10], 64, 'sgd', false, 'cpu', 'jit'));
  rows.push(trainRow([784, 128, 10], 64, 'sgd', false, 'cpu', 'notidy'));
  rows.push(mm(256, 256, 256, false, false, 'cpu'));
  rows.push(mm(256, 784, 512, false, false, 'cpu', 'MLP fwd 1'));
  return rows;
}
