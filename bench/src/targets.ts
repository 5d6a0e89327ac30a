/**
 * The targets of issue 7, checked against a run's results: one line each, for the rows the
 * run has (a --quick run has none of the full-size ones, so most lines say "not measured").
 */
import type { FrameworkId } from './framework';
import { RowResult, fmtNum, isMeasured } from './report';

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
  const add = (target: string, surf: number | null, ref: number | null, refLabel: string, met: (s: number, r: number) => boolean, unit: string) => {
    out.push({
      target,
      surf: surf === null ? 'not measured' : `${fmtNum(surf)} ${unit}`,
      reference: ref === null ? `${refLabel}: not measured` : `${refLabel} ${fmtNum(ref)} ${unit}`,
      met: surf === null || ref === null ? null : met(surf, ref),
    });
  };

  add('matmul 4096³ >= 35 TFLOP/s', value(results, 'matmul/4096', 'surf-webgpu'), 35000, 'target', (s, r) => s >= r, 'GFLOP/s');

  const ratioRows = results.filter((r) => r.row.group === 'matmul' && r.row.kind === 'matmul' && (!/^matmul\/\d+$/.test(r.row.id) || [256, 512, 1024].includes(Number(r.row.id.split('/')[1]))));
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
  add('dispatch overhead <= 10 µs/op', over ? value(results, over.row.id, 'surf-webgpu') : null, 10, 'target', (s, r) => s <= r, 'µs/op');

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
    (() => { const v = value(results, 'cpu/train/784-128-10-b64-sgd', 'ort-cpu'); return v === null ? null : 0.5 * v; })(),
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

/** One line per target whose Surf row this run measured. */
export function targetLines(results: RowResult[]): string[] {
  return checkTargets(results).filter((t) => t.surf !== 'not measured').map((t) => `${t.met === null ? '  ?  ' : t.met ? ' met ' : 'MISS '} ${t.target}: Surf ${t.surf}; ${t.reference}`);
}
