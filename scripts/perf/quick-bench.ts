/**
 * Quick throughput figures for docs/kernels.md: matmul 128/256/512 (GFLOP/s), sum of 1M
 * elements and elementwise add on 1M (GB/s), and the host cost of recording a small op
 * (µs/op). Runs in plain Node (an ESM bundle with `webgpu` external) and prints the adapter.
 *
 *   node scripts/run-ts.mjs scripts/perf/quick-bench.ts [--reps N] [--json]
 *   npx esbuild scripts/perf/quick-bench.ts --bundle --platform=node \
 *     --format=esm --external:webgpu --outfile=quick-bench.mjs && node quick-bench.mjs
 */
import { E, NDArray, randomArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';

interface Row {
  what: string;
  ms: number;
  rate: number;
  unit: string;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const repsArg = args.indexOf('--reps');
  const reps = repsArg >= 0 ? Number(args[repsArg + 1]) : 10;
  const json = args.includes('--json');
  const b = await createWebGPUBackend();
  const rows: Row[] = [];

  // Times `reps` runs of `op` after a warm-up, waiting for the GPU; returns ms per run.
  const time = async (op: () => NDArray): Promise<number> => {
    op().dispose();
    await b.sync();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) op().dispose();
    await b.sync();
    return (performance.now() - t0) / reps;
  };

  for (const n of [128, 256, 512]) {
    const x = NDArray.fromData(b, randomArray('uniform', n * n, 1, -1, 1), [n, n]);
    const y = NDArray.fromData(b, randomArray('uniform', n * n, 2, -1, 1), [n, n]);
    const ms = await time(() => x.matmul(y));
    rows.push({ what: `matmul ${n}x${n}x${n}`, ms, rate: (2 * n * n * n) / ms / 1e6, unit: 'GFLOP/s' });
    x.dispose();
    y.dispose();
  }
  const N = 1 << 20;
  const a = NDArray.fromData(b, randomArray('uniform', N, 3), [N]);
  const c = NDArray.fromData(b, randomArray('uniform', N, 4), [N]);
  let ms = await time(() => a.sum());
  rows.push({ what: 'sum 1M f32 -> 1', ms, rate: (N * 4) / ms / 1e6, unit: 'GB/s' });
  ms = await time(() => a.map(E.add(E.in(0), E.in(1)), c));
  rows.push({ what: 'add 1M f32 + 1M f32', ms, rate: (3 * N * 4) / ms / 1e6, unit: 'GB/s' });
  const m = NDArray.fromData(b, randomArray('uniform', 1024 * 1024, 5), [1024, 1024]);
  ms = await time(() => m.permute([1, 0]).map(E.mul(E.in(0), E.f(2))));
  rows.push({ what: 'transposed copy*2 1024x1024', ms, rate: (2 * N * 4) / ms / 1e6, unit: 'GB/s' });
  m.dispose();

  // Host cost per op: record many tiny ops (GPU work is negligible); best of 5 rounds, since
  // the first rounds include JIT warm-up and a busy machine inflates single rounds.
  const s = NDArray.fromData(b, [1, 2, 3, 4], [4]);
  const OPS = 2000;
  let best = Infinity;
  for (let round = 0; round < 6; round++) {
    await b.sync();
    const t0 = performance.now();
    for (let i = 0; i < OPS; i++) s.map(E.mul(E.in(0), E.f(i))).dispose();
    const t = performance.now() - t0;
    if (round > 0) best = Math.min(best, t);
  }
  await b.sync();
  rows.push({ what: 'host time per small elementwise op', ms: best / OPS, rate: (best / OPS) * 1000, unit: 'us/op' });
  for (const x of [a, c, s]) x.dispose();

  if (json) {
    console.log(JSON.stringify({ adapter: b.description, rows }, null, 2));
  } else {
    console.log(`adapter: ${b.description}`);
    for (const r of rows)
      console.log(
        `${r.what.padEnd(38)} ${r.ms.toFixed(3).padStart(10)} ms  ${r.rate.toFixed(2).padStart(10)} ${r.unit}`,
      );
  }
  b.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
