/**
 * The rows of the suite: what each measures, at full size (the GPU host) and in --quick mode
 * (SwiftShader or CPU boxes). Every framework runs the same row list; bench/torch/bench.py
 * receives it as JSON.
 */
import type { MatmulSpec } from './data';

export type Group = 'matmul' | 'reduce' | 'elementwise' | 'overhead' | 'train' | 'cpu';
export const GROUPS: readonly Group[] = ['matmul', 'reduce', 'elementwise', 'overhead', 'train', 'cpu'];

export type Unit = 'GFLOP/s' | 'GB/s' | 'µs/op' | 'steps/s';

interface RowBase {
  /** Stable key, e.g. 'matmul/1024' (used in JSON and by bench.py). */
  id: string;
  group: Group;
  label: string;
  unit: Unit;
  /** Device class: 'gpu' rows compare WebGPU frameworks (and PyTorch CUDA), 'cpu' rows CPU ones. */
  device: 'gpu' | 'cpu';
}

export interface MatmulRow extends RowBase { kind: 'matmul'; spec: MatmulSpec }
/** Sum of a [rows, cols] matrix: everything (axis null), over the first axis (0) or the last (1). */
export interface SumRow extends RowBase { kind: 'sum'; rows: number; cols: number; axis: 0 | 1 | null }
/** out = a*b + c on [rows, cols]; `permuted`: a is a transposed view of a [cols, rows] buffer. */
export interface FmaRow extends RowBase { kind: 'fma'; rows: number; cols: number; permuted: boolean }
/** `ops` dependent elementwise adds on `size` elements, one sync at the end. */
export interface OverheadRow extends RowBase { kind: 'overhead'; ops: number; size: number }
export interface TrainRow extends RowBase {
  kind: 'train';
  /** Layer widths, e.g. [784, 128, 10]; ReLU between layers, cross-entropy on the logits. */
  layers: number[];
  batch: number;
  optimizer: 'sgd' | 'adam';
  lr: number;
  /** Read the loss back to the host after every step (the usual training loop with logging). */
  readback: boolean;
  // ---- eagermem ----
  /**
   * The loop PyTorch users write: no tidy(), no dispose(), the loss read every `readEvery`
   * steps (memory is reclaimed by the collections Surf runs at those reads).
   */
  noTidy?: { readEvery: number };
}
/** The MNIST example's own training loop (examples/mlp/src/train.ts), `steps` steps of its first epoch (125 = all of it at batch 64). */
export interface ExampleRow extends RowBase { kind: 'example'; steps: number }

export type Row = MatmulRow | SumRow | FmaRow | OverheadRow | TrainRow | ExampleRow;

/** The work one iteration does, in the row's unit's numerator (FLOP, bytes) or 1. */
export function workPerIter(row: Row): number {
  switch (row.kind) {
    case 'matmul': return 2 * row.spec.m * row.spec.k * row.spec.n;
    case 'sum': return 4 * row.rows * row.cols;
    case 'fma': return 4 * 4 * row.rows * row.cols;
    case 'overhead': return 1;
    case 'train': return 1;
    case 'example': return 1;
  }
}

/** Converts seconds per iteration to the row's unit (an overhead row's iteration is one op). */
export function toUnit(row: Row, secondsPerIter: number): number {
  switch (row.unit) {
    case 'GFLOP/s': return workPerIter(row) / secondsPerIter / 1e9;
    case 'GB/s': return workPerIter(row) / secondsPerIter / 1e9;
    case 'µs/op': return secondsPerIter * 1e6;
    case 'steps/s': return 1 / secondsPerIter;
  }
}

export function higherIsBetter(unit: Unit): boolean {
  return unit !== 'µs/op';
}

/** Bytes of device input one iteration reads (for choosing how many input sets to rotate). */
export function inputBytes(row: Row): number {
  switch (row.kind) {
    case 'matmul': return 4 * row.spec.k * (row.spec.m + row.spec.n);
    case 'sum': return 4 * row.rows * row.cols;
    case 'fma': return 12 * row.rows * row.cols;
    default: return Infinity;
  }
}

function mm(m: number, k: number, n: number, ta = false, tb = false, device: 'gpu' | 'cpu' = 'gpu', note = ''): MatmulRow {
  const square = m === k && k === n && !ta && !tb;
  const label = square ? `matmul ${m}³` : `matmul ${m}x${k}x${n}${ta ? ' Aᵀ' : ''}${tb ? ' Bᵀ' : ''}${note ? ` (${note})` : ''}`;
  const id = `${device === 'cpu' ? 'cpu/' : ''}matmul/${square ? m : `${m}x${k}x${n}${ta ? 'tA' : ''}${tb ? 'tB' : ''}`}`;
  return { id, group: device === 'cpu' ? 'cpu' : 'matmul', label, unit: 'GFLOP/s', device, kind: 'matmul', spec: { m, k, n, ta, tb } };
}

function sumRow(rows: number, cols: number, axis: 0 | 1 | null): SumRow {
  const n = rows * cols;
  const mega = n / 2 ** 20;
  if (axis === null) return { id: `reduce/sum-${mega}M`, group: 'reduce', label: `sum all ${mega}M`, unit: 'GB/s', device: 'gpu', kind: 'sum', rows, cols, axis };
  return { id: `reduce/sum-${rows}x${cols}-axis${axis}`, group: 'reduce', label: `sum [${rows}x${cols}] over ${axis === 1 ? 'last' : 'first'} axis`, unit: 'GB/s', device: 'gpu', kind: 'sum', rows, cols, axis };
}

function fmaRow(side: number, permuted: boolean): FmaRow {
  const mega = (side * side) / 2 ** 20;
  return { id: `elementwise/fma-${mega}M${permuted ? '-permuted' : ''}`, group: 'elementwise', label: `a*b+c ${mega}M${permuted ? ' (a permuted view)' : ''}`, unit: 'GB/s', device: 'gpu', kind: 'fma', rows: side, cols: side, permuted };
}

function trainRow(layers: number[], batch: number, optimizer: 'sgd' | 'adam', readback: boolean, device: 'gpu' | 'cpu' = 'gpu'): TrainRow {
  const lr = optimizer === 'sgd' ? 0.1 : 1e-3;
  const name = `MLP ${layers.join('-')} b${batch} ${optimizer === 'sgd' ? 'SGD' : 'Adam'}`;
  return {
    id: `${device === 'cpu' ? 'cpu/' : ''}train/${layers.join('-')}-b${batch}-${optimizer}${readback ? '-readback' : ''}`,
    group: device === 'cpu' ? 'cpu' : 'train',
    label: `${name}${readback ? ', loss read every step' : ', sync at end'}`,
    unit: 'steps/s',
    device,
    kind: 'train',
    layers,
    batch,
    optimizer,
    lr,
    readback,
  };
}

// eagermem
function noTidyRow(r: TrainRow): TrainRow {
  return { ...r, id: `${r.id}-notidy`, label: r.label.replace(', sync at end', ', without tidy, loss read every 10 steps'), noTidy: { readEvery: 10 } };
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

export function buildRows(quick: boolean): Row[] {
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

  rows.push({ id: 'overhead/add-chain', group: 'overhead', label: `dispatch: ${quick ? 200 : 1000} dependent adds on 1K elements`, unit: 'µs/op', device: 'gpu', kind: 'overhead', ops: quick ? 200 : 1000, size: 1024 });

  // --quick shrinks the big MLP (SwiftShader takes seconds per step of the full one).
  const big = quick ? [784, 256, 256, 10] : [784, 512, 512, 10];
  const bigBatch = quick ? 128 : 256;
  for (const readback of [false, true]) {
    rows.push(trainRow([784, 128, 10], 64, 'sgd', readback));
    rows.push(trainRow(big, bigBatch, 'adam', readback));
  }
  rows.push({ id: 'train/mnist-example', group: 'train', label: 'MNIST example (examples/mlp) training loop', unit: 'steps/s', device: 'gpu', kind: 'example', steps: quick ? 20 : 125 });

  // eagermem: the same loop without tidy (loss read every 10 steps), beside the tidy rows
  rows.push(noTidyRow(trainRow([784, 128, 10], 64, 'sgd', false)));
  rows.push(trainRow([784, 128, 10], 64, 'sgd', false, 'cpu'));
  rows.push(noTidyRow(trainRow([784, 128, 10], 64, 'sgd', false, 'cpu')));
  rows.push(mm(256, 256, 256, false, false, 'cpu'));
  rows.push(mm(256, 784, 512, false, false, 'cpu', 'MLP fwd 1'));
  return rows;
}
