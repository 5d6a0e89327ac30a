/**
 * PyTorch CUDA as a peer: when `python3` has torch with CUDA (the GPU host does), the suite
 * runs bench/torch/bench.py on the same rows (sent as JSON) after the JavaScript frameworks,
 * and merges its figures.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { bundleDir } from './env';
import type { Outcome } from './report';
import type { Row } from './rows';
import type { TimingOptions } from './timing';

export interface TorchRun {
  env: Record<string, unknown>;
  results: Record<string, Outcome>;
}

function python(): string {
  return process.env.PYTHON ?? 'python3';
}

/** bench.py next to the bundle (GPU host) or in the checkout. */
export function torchScript(): string | null {
  for (const p of [join(bundleDir(), 'bench.py'), resolve('bench/torch/bench.py')]) if (existsSync(p)) return p;
  return null;
}

/** Null when PyTorch with CUDA is there; otherwise why not. */
export function torchUnavailable(): string | null {
  const r = spawnSync(python(), ['-c', 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) return `${python()} not runnable: ${r.error.message}`;
  if (r.status === 3) return 'torch.cuda.is_available() is False';
  if (r.status !== 0) return `no torch in ${python()}: ${(r.stderr || '').trim().split('\n').pop()}`;
  if (!torchScript()) return 'bench/torch/bench.py not found';
  return null;
}

/** `warmupMs`: per row id, the warm-up time the JavaScript frameworks get (suite.ts warmupMsOf). */
export function runTorch(
  rows: Row[],
  timing: TimingOptions,
  quick: boolean,
  log: (s: string) => void,
  timeoutS: number,
  warmupMs: Record<string, number> = {},
): TorchRun | { error: string } {
  const script = torchScript();
  if (!script) return { error: 'bench/torch/bench.py not found' };
  const dir = mkdtempSync(join(os.tmpdir(), 'surf-bench-'));
  try {
    const spec = join(dir, 'spec.json');
    const out = join(dir, 'torch.json');
    writeFileSync(spec, JSON.stringify({ quick, timing, rows, warmupMs }));
    log(`running PyTorch: ${python()} ${script} (${rows.length} rows)`);
    const r = spawnSync(python(), [script, '--spec', spec, '--out', out], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: timeoutS * 1000,
    });
    if (r.error) return { error: `bench.py: ${r.error.message}` };
    if (!existsSync(out)) return { error: `bench.py exited with ${r.status ?? r.signal} and wrote no results` };
    return JSON.parse(readFileSync(out, 'utf8')) as TorchRun;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
