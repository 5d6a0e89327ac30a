/**
 * The targets of issues 7, 12, 13 and 14, checked against a run's results: one line each, for the rows the
 * run has (a --quick run has none of the full-size ones, so most lines say "not measured").
 */
import type { FrameworkId } from './framework';
import { RowResult, fmtNum, isMeasured } from './report';
import type { Row } from './rows';

export interface TargetLine {
  target: string;
  surf: string;
  reference: string;
  met: boolean | null;
}

function value(results: RowResult[], id: string, fw: FrameworkId): number | null {
  const r = results.find((x) => x.row.id === id);
  const o = r?.results[fw];
  return isMeasured(o) && o.check.ok ? o.value : null;
}

export function checkTargets(results: RowResult[]): TargetLine[] {
  const out: TargetLine[] = [];
  const add: Add = (
    target: string,
    surf: number | null,
    ref: number | null,
    refLabel: string,
    met: (s: number, r: number) => boolean,
    unit: string,
  ) => {
    out.push({
      target,
      surf: surf === null ? 'not measured' : `${fmtNum(surf)} ${unit}`,
      reference: ref === null ? `${refLabel}: not measured` : `${refLabel} ${fmtNum(ref)} ${unit}`,
      met: surf === null || ref === null ? null : met(surf, ref),
    });
  };

  add(
    'matmul 4096³ >= 35 TFLOP/s',
    value(results, 'matmul/4096', 'surf-webgpu'),
    35000,
    'target',
    (s, r) => s >= r,
    'GFLOP/s',
  );

  const ratioRows = results.filter(
    (r) =>
      r.row.group === 'matmul' &&
      r.row.kind === 'matmul' &&
      (!/^matmul\/\d+$/.test(r.row.id) || [256, 512, 1024].includes(Number(r.row.id.split('/')[1]))),
  );
  for (const r of ratioRows) {
    const s = value(results, r.row.id, 'surf-webgpu');
    const t = value(results, r.row.id, 'tfjs-webgpu');
    add(`${r.row.label} >= 2x TF.js`, s, t === null ? null : 2 * t, '2x TF.js', (a, b) => a >= b, 'GFLOP/s');
  }

  const torchMlp = value(results, 'train/784-128-10-b64-sgd', 'torch-cuda');
  add(
    'MLP 784-128-10 b64 SGD >= PyTorch CUDA eager',
    value(results, 'train/784-128-10-b64-sgd', 'surf-webgpu'),
    torchMlp ?? 1716,
    torchMlp === null ? 'PyTorch (issue figure)' : 'PyTorch',
    (s, r) => s >= r,
    'steps/s',
  );

  const torchSum = value(results, 'reduce/sum-64M', 'torch-cuda');
  add(
    'full sum 64M >= 70% of PyTorch',
    value(results, 'reduce/sum-64M', 'surf-webgpu'),
    0.7 * (torchSum ?? 3900),
    torchSum === null ? '70% of 3.9 TB/s (issue figure)' : '70% of PyTorch',
    (s, r) => s >= r,
    'GB/s',
  );

  const over = results.find((r) => r.row.kind === 'overhead');
  add(
    'dispatch overhead <= 10 µs/op',
    over ? value(results, over.row.id, 'surf-webgpu') : null,
    10,
    'target',
    (s, r) => s <= r,
    'µs/op',
  );

  addModelTargets(results, add);

  add(
    'CPU MLP 784-128-10 b64 SGD >= jax-js wasm',
    value(results, 'cpu/train/784-128-10-b64-sgd', 'surf-cpu'),
    value(results, 'cpu/train/784-128-10-b64-sgd', 'jax-wasm'),
    'jax-js wasm',
    (s, r) => s >= r,
    'steps/s',
  );

  // Issue 15, CPU: within 2x of onnxruntime's native CPU backend; matmul above TF.js wasm.
  add(
    'CPU MLP 784-128-10 b64 SGD >= 0.5x onnxruntime-node cpu',
    value(results, 'cpu/train/784-128-10-b64-sgd', 'surf-cpu'),
    (() => {
      const v = value(results, 'cpu/train/784-128-10-b64-sgd', 'ort-cpu');
      return v === null ? null : 0.5 * v;
    })(),
    '0.5x ORT cpu',
    (s, r) => s >= r,
    'steps/s',
  );
  add(
    'CPU matmul 256x784x512 >= TF.js wasm',
    value(results, 'cpu/matmul/256x784x512', 'surf-cpu'),
    value(results, 'cpu/matmul/256x784x512', 'tfjs-wasm'),
    'TF.js wasm',
    (s, r) => s >= r,
    'GFLOP/s',
  );
  return out;
}

type Add = (
  target: string,
  surf: number | null,
  ref: number | null,
  refLabel: string,
  met: (s: number, r: number) => boolean,
  unit: string,
) => void;

function rowOf(results: RowResult[], pred: (r: Row) => boolean): RowResult | undefined {
  return results.find((r) => pred(r.row));
}

function valueOf(r: RowResult | undefined, fw: FrameworkId): number | null {
  return r ? value([r], r.row.id, fw) : null;
}

/** Issues 12 (jit, loops without tidy), 13 (CNN) and 14 (attention, GPT). */
function addModelTargets(results: RowResult[], add: Add): void {
  const geq = (s: number, r: number) => s >= r;

  const fused = rowOf(results, (r) => r.kind === 'attention' && r.impl === 'fused');
  const plain = rowOf(results, (r) => r.kind === 'attention' && r.impl === 'plain');
  const sdpa = valueOf(fused, 'torch-cuda');
  const torchPlain = valueOf(plain, 'torch-cuda');
  const surfFused = valueOf(fused, 'surf-webgpu');
  // PyTorch's plain softmax(QKᵀ)V is the second reference the issue names: shown beside.
  const plainNote =
    torchPlain === null
      ? ''
      : ` [PyTorch plain softmax(QKᵀ)V ${fmtNum(torchPlain)} GFLOP/s${surfFused === null ? '' : `: Surf fused ${(surfFused / torchPlain).toFixed(2)}x it`}]`;
  add(
    `attention fwd+bwd ${fused ? (fused.row.label.match(/\[[^\]]*\]/)?.[0] ?? '') : ''} causal >= 0.5x PyTorch fused SDPA${plainNote}`,
    surfFused,
    sdpa === null ? null : 0.5 * sdpa,
    '0.5x PyTorch SDPA',
    geq,
    'GFLOP/s',
  );

  // The examples train under jit by default: their step is the jit row where the run has one.
  const gpt = rowOf(results, (r) => r.kind === 'gpt' && r.jit) ?? rowOf(results, (r) => r.kind === 'gpt');
  add(
    `GPT training step tokens/s${gpt?.row.kind === 'gpt' && gpt.row.jit ? ' (jit, as the example)' : ''} >= PyTorch eager`,
    valueOf(gpt, 'surf-webgpu'),
    valueOf(gpt, 'torch-cuda'),
    'PyTorch eager',
    geq,
    'tokens/s',
  );

  for (const r of results.filter((x) => x.row.kind === 'conv')) {
    const s = valueOf(r, 'surf-webgpu');
    const tf = valueOf(r, 'tfjs-webgpu');
    const cudnn = valueOf(r, 'torch-cuda');
    add(`${r.row.label} >= 3x TF.js`, s, tf === null ? null : 3 * tf, '3x TF.js', geq, r.row.unit);
    add(
      `${r.row.label} >= 0.5x PyTorch${(r.row as Extract<Row, { kind: 'conv' }>).op === 'conv2d' ? ' (cuDNN)' : ''}`,
      s,
      cudnn === null ? null : 0.5 * cudnn,
      '0.5x PyTorch',
      geq,
      r.row.unit,
    );
  }

  for (const cnn of results.filter((r) => r.row.kind === 'cnn' && r.row.jit)) {
    add(
      `${cnn.row.label} >= PyTorch eager`,
      valueOf(cnn, 'surf-webgpu'),
      valueOf(cnn, 'torch-cuda'),
      'PyTorch eager',
      geq,
      'steps/s',
    );
  }

  const mlp = (layers: string, opt: string, loop: string, readback: boolean) =>
    rowOf(
      results,
      (r) =>
        r.kind === 'train' &&
        r.device === 'gpu' &&
        r.layers.join('-') === layers &&
        r.optimizer === opt &&
        r.loop === loop &&
        r.readback === readback,
    );
  const sgdJit = mlp('784-128-10', 'sgd', 'jit', false);
  add(
    'jit MLP 784-128-10 b64 SGD >= PyTorch CUDA graph',
    valueOf(sgdJit, 'surf-webgpu'),
    valueOf(sgdJit, 'torch-cuda'),
    'PyTorch CUDA graph',
    geq,
    'steps/s',
  );
  const adamJit = rowOf(
    results,
    (r) => r.kind === 'train' && r.device === 'gpu' && r.optimizer === 'adam' && r.loop === 'jit' && !r.readback,
  );
  const adamEager =
    adamJit &&
    rowOf(
      results,
      (r) => r.kind === 'train' && r.device === 'gpu' && r.optimizer === 'adam' && r.loop === 'tidy' && !r.readback,
    );
  const adamTorch = valueOf(adamEager, 'torch-cuda');
  add(
    `jit ${adamJit?.row.label.split(',')[0] ?? 'MLP Adam'} >= 2x PyTorch eager`,
    valueOf(adamJit, 'surf-webgpu'),
    adamTorch === null ? null : 2 * adamTorch,
    '2x PyTorch eager',
    geq,
    'steps/s',
  );

  // Reading the loss every step: Surf's eager and jit loops against 2x PyTorch's eager loop.
  for (const r of results.filter((x) => x.row.kind === 'train' && x.row.device === 'gpu' && x.row.readback)) {
    const row = r.row as Extract<Row, { kind: 'train' }>;
    const t = valueOf(mlp(row.layers.join('-'), row.optimizer, 'tidy', true), 'torch-cuda');
    add(
      `${row.label.replace(' (PyTorch: CUDA graph)', '')} >= 2x PyTorch eager`,
      valueOf(r, 'surf-webgpu'),
      t === null ? null : 2 * t,
      '2x PyTorch eager',
      geq,
      'steps/s',
    );
  }

  // The no-tidy loop reads its loss every 10 steps; the tidy row syncs once at the end, so
  // this compares it with a slightly easier figure.
  for (const r of results.filter((x) => x.row.kind === 'train' && x.row.loop === 'notidy')) {
    const row = r.row as Extract<Row, { kind: 'train' }>;
    const tidy = rowOf(
      results,
      (x) =>
        x.kind === 'train' &&
        x.device === row.device &&
        x.layers.join('-') === row.layers.join('-') &&
        x.optimizer === row.optimizer &&
        x.loop === 'tidy' &&
        !x.readback,
    );
    const fw: FrameworkId = row.device === 'gpu' ? 'surf-webgpu' : 'surf-cpu';
    const t = valueOf(tidy, fw);
    add(
      `${row.device === 'cpu' ? 'CPU ' : ''}${row.label.split(',')[0]} without tidy >= 0.85x the tidy loop`,
      valueOf(r, fw),
      t === null ? null : 0.85 * t,
      '0.85x Surf tidy (sync at end)',
      geq,
      'steps/s',
    );
  }

  const over = rowOf(results, (r) => r.kind === 'overhead');
  add('dispatch <= 6 µs/op (issue 12)', valueOf(over, 'surf-webgpu'), 6, 'target', (s, r) => s <= r, 'µs/op');
}

/** One line per target whose Surf row this run measured. */
export function targetLines(results: RowResult[]): string[] {
  return checkTargets(results)
    .filter((t) => t.surf !== 'not measured')
    .map((t) => `${t.met === null ? '  ?  ' : t.met ? ' met ' : 'MISS '} ${t.target}: Surf ${t.surf}; ${t.reference}`);
}
