/**
 * `npm run tune`: times the matmul candidates (MATMUL_CANDIDATES) on the representative
 * problems (TUNE_PROBLEMS) on this machine's WebGPU adapter, prints each problem's winner
 * and every candidate's TFLOP/s, and stores the table in a JSON cache file that
 * `createWebGPUBackend({ matmul: 'auto', tuneCache: <file> })` reads instead of tuning again.
 *
 *   npm run tune -- [--out bench/results/matmul-tune.json] [--min-ms 30] [--problems 128,256]
 *
 * --problems replaces the problem list with square sizes (a quick look, e.g. on SwiftShader).
 *
 * On a software adapter (SwiftShader) it still runs, slowly, but 'auto' ignores software
 * adapters (they keep their small rolled config), so the result there is informational.
 */
import {
  MATMUL_CANDIDATES,
  TUNE_PROBLEMS,
  createWebGPUBackend,
  tuneKey,
  tuneMatmul,
  writeTuneCache,
} from '@surf/webgpu';
import { JobProgress } from './job-progress';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const short = (c: (typeof MATMUL_CANDIDATES)[number]) =>
  `${c.tileM}x${c.tileN}x${c.tileK} ${c.threadM}x${c.threadN}${c.padA ? ` pad${c.padA}` : ''}${c.interleave ? ' il' : ''}`;

async function main(): Promise<void> {
  const out = arg('--out') ?? 'bench/results/matmul-tune.json';
  const b = await createWebGPUBackend();
  console.log(`adapter: ${b.description}${b.software ? ' (software: matmul "auto" will not use this table)' : ''}`);
  console.log(`candidates: ${MATMUL_CANDIDATES.map(short).join(' | ')}`);
  const t0 = performance.now();
  const problems = arg('--problems')
    ?.split(',')
    .map((n): [number, number, number] => [+n, +n, +n]);
  const bar = new JobProgress('tune', (problems ?? TUNE_PROBLEMS).length, 'problems');
  let done = 0;
  const t = await tuneMatmul(b, {
    minMs: Number(arg('--min-ms') ?? 30),
    problems,
    log: (e) => {
      const tf = (ms: number) => ((2 * e.m * e.n * e.k) / ms / 1e9).toFixed(2);
      bar.line(
        `${e.m}x${e.n}x${e.k}: best ${short(e.cfg)} ${tf(e.ms)} TFLOP/s; all: ${e.times.map((x) => (Number.isNaN(x) ? '-' : tf(x))).join(' ')}`,
      );
      bar.update(++done);
    },
  });
  bar.clear();
  console.log(`tuned in ${((performance.now() - t0) / 1000).toFixed(1)} s; writing ${out}`);
  await writeTuneCache(out, tuneKey(b), t);
  b.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
