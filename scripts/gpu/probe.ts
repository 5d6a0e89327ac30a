// Kernel probe for tuning on a real GPU: matmul TFLOP/s per (problem, config) on square sizes
// and the MLP example's layer shapes (forward and both backward transposes), the fused
// epilogue against matmul + a separate pass, the autotuner's table, reductions and
// elementwise GB/s, and per-op host overhead. One bundle, one run: see scripts/gpu/build.sh.
// Usage: node probe.mjs [--configs '<json array of MatmulConfig>' | @file.json] [--sizes 256,1024,4096]
//        [--skip mm,mlp,epi,tune,reduce,ew,overhead] [--min-ms 100]
import { readFileSync } from 'fs';
import { E, NDArray, randomArray } from '@surf/core';
import { MatmulConfig, WebGPUBackend, bucketedMatmulConfig, createWebGPUBackend, tuneMatmul } from '@surf/webgpu';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const sizes = (arg('--sizes') ?? '256,1024,2048,4096').split(',').map(Number);
// --configs '<json>' or --configs @file.json; null in the list means the bucketed default.
const cfgArg = arg('--configs');
const configs: (MatmulConfig | null)[] = cfgArg
  ? JSON.parse(cfgArg.startsWith('@') ? readFileSync(cfgArg.slice(1), 'utf8') : cfgArg)
  : [null];
const skip = new Set((arg('--skip') ?? '').split(','));
const minMs = Number(arg('--min-ms') ?? 100);
const short = (c: MatmulConfig | null) =>
  c
    ? `${c.tileM}x${c.tileN}x${c.tileK} ${c.threadM}x${c.threadN}${c.vecA === false ? ' noVecA' : ''}${c.padA ? ` pad${c.padA}` : ''}${c.interleave ? ' il' : ''}${c.rows ? ' rows' : ''}${c.doubleBuffer ? ' db' : ''}${c.unroll === false ? ' rolled' : ''}`
    : 'bucketed default';

/**
 * Median ms per op over 5 rounds of about ms0/5 each, after keeping the GPU busy for 200 ms:
 * run 2 and 3 showed 3-6x slower single measurements when the GPU had idled (clocks down)
 * while the host generated inputs.
 */
async function timeIt(b: { sync(): Promise<void> }, op: () => void, ms0 = minMs): Promise<number> {
  op();
  await b.sync();
  let reps = 1;
  for (const t0 = performance.now(); performance.now() - t0 < 200;) {
    const t1 = performance.now();
    for (let i = 0; i < reps; i++) op();
    await b.sync();
    if (performance.now() - t1 < ms0 / 5 && reps < 4096) reps *= 2;
  }
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t1 = performance.now();
    for (let i = 0; i < reps; i++) op();
    await b.sync();
    rounds.push((performance.now() - t1) / reps);
  }
  return rounds.sort((x, y) => x - y)[2];
}

/** [label, m, k, n, aTransposed, bTransposed]: A is m×k, B is k×n; transposed ones are permuted views. */
type Shape = [string, number, number, number, boolean, boolean];
const MLP: Shape[] = [
  ['mlp fwd 256x784x512', 256, 784, 512, false, false],
  ['mlp fwd 256x512x10', 256, 512, 10, false, false],
  ['mlp dW1 784x256x512 (xT g)', 784, 256, 512, true, false],
  ['mlp dX1 256x512x784 (g WT)', 256, 512, 784, false, true],
  ['mlp dW2 512x256x10 (hT g)', 512, 256, 10, true, false],
  ['mlp dH 256x10x512 (g W2T)', 256, 10, 512, false, true],
  ['mlp64 fwd 64x784x128', 64, 784, 128, false, false],
  ['mlp64 fwd 64x128x10', 64, 128, 10, false, false],
  ['mlp64 dW1 784x64x128', 784, 64, 128, true, false],
];

function operands(b: WebGPUBackend, m: number, k: number, n: number, at: boolean, bt: boolean): NDArray[] {
  const x = at
    ? NDArray.fromData(b, randomArray('uniform', m * k, 1, -1, 1), [k, m])
    : NDArray.fromData(b, randomArray('uniform', m * k, 1, -1, 1), [m, k]);
  const y = bt
    ? NDArray.fromData(b, randomArray('uniform', k * n, 2, -1, 1), [n, k])
    : NDArray.fromData(b, randomArray('uniform', k * n, 2, -1, 1), [k, n]);
  return [x, y, at ? x.permute([1, 0]) : x, bt ? y.permute([1, 0]) : y];
}

async function matmulRows(b: WebGPUBackend, cfg: MatmulConfig | null, shapes: Shape[]): Promise<void> {
  b.setMatmulConfig(cfg ? () => cfg : undefined);
  for (const [label, m, k, n, at, bt] of shapes) {
    const [x, y, xa, yb] = operands(b, m, k, n, at, bt);
    try {
      const ms = await timeIt(b, () => xa.matmul(yb).dispose());
      console.log(
        JSON.stringify({
          kind: 'matmul',
          label,
          cfg: short(cfg ?? bucketedMatmulConfig(m, n, k, 1)),
          chosen: !cfg,
          ms: +ms.toFixed(4),
          tflops: +((2 * m * n * k) / ms / 1e9).toFixed(2),
        }),
      );
    } catch (e) {
      console.log(JSON.stringify({ kind: 'matmul', label, cfg: short(cfg), error: String(e).slice(0, 300) }));
    }
    x.dispose();
    y.dispose();
  }
}

async function ewRows(b: WebGPUBackend, tag: string): Promise<void> {
  const N = 1 << 24;
  const [p, q, r] = [5, 6, 7].map((s) => NDArray.fromData(b, randomArray('uniform', N, s), [N]));
  let ms = await timeIt(b, () =>
    NDArray.elementwise([E.add(E.mul(E.in(0), E.in(1)), E.in(2))], [p, q, r])[0].dispose(),
  );
  console.log(
    JSON.stringify({ kind: 'a*b+c 16M', tag, ms: +ms.toFixed(4), gbs: +((4 * N * 4) / ms / 1e6).toFixed(1) }),
  );
  const pt = p.reshape([4096, 4096]).permute([1, 0]);
  const q2 = q.reshape([4096, 4096]);
  const r2 = r.reshape([4096, 4096]);
  ms = await timeIt(b, () => NDArray.elementwise([E.add(E.mul(E.in(0), E.in(1)), E.in(2))], [pt, q2, r2])[0].dispose());
  console.log(
    JSON.stringify({ kind: 'a^T*b+c 16M', tag, ms: +ms.toFixed(4), gbs: +((4 * N * 4) / ms / 1e6).toFixed(1) }),
  );
  for (const t of [p, q, r]) t.dispose();
}

async function reduceRows(b: WebGPUBackend, tag: string): Promise<void> {
  for (const n of [1 << 20, 1 << 24, 1 << 26]) {
    const a = NDArray.fromData(b, randomArray('uniform', n, 3), [n]);
    const ms = await timeIt(b, () => a.sum().dispose());
    console.log(JSON.stringify({ kind: 'sum', tag, n, ms: +ms.toFixed(4), gbs: +((n * 4) / ms / 1e6).toFixed(1) }));
    a.dispose();
  }
  const m = NDArray.fromData(b, randomArray('uniform', 4096 * 4096, 4), [4096, 4096]);
  for (const ax of [1, 0]) {
    const ms = await timeIt(b, () => m.sum(ax).dispose());
    console.log(
      JSON.stringify({
        kind: `sum4096 axis${ax}`,
        tag,
        ms: +ms.toFixed(4),
        gbs: +((4096 * 4096 * 4) / ms / 1e6).toFixed(1),
      }),
    );
  }
  // The MLP's bias gradient: [256, 512] over the batch axis.
  const g = NDArray.fromData(b, randomArray('uniform', 256 * 512, 5), [256, 512]);
  const gms = await timeIt(b, () => g.sum(0).dispose());
  console.log(JSON.stringify({ kind: 'sum [256,512] axis0', tag, us: +(gms * 1000).toFixed(2) }));
  m.dispose();
  g.dispose();
}

async function main(): Promise<void> {
  // Bandwidth kernels first, each variant on a fresh backend (run 2 saw a long-lived backend
  // measure slower after the matmul sweep; the last rows re-measure b0 to check that).
  const b0 = await createWebGPUBackend();
  console.log(
    JSON.stringify({ adapter: b0.description, maxWorkgroupStorage: b0.limits.maxComputeWorkgroupStorageSize }),
  );
  if (!skip.has('ew')) await ewRows(b0, 'fresh');
  if (!skip.has('reduce')) {
    await reduceRows(b0, 'default');
    for (const [tag, reduce] of [
      ['run-1 plan', { vec4: false, unroll: false, colOutputs: 0, targetGroups: 16384 }],
      ['perThread 64, 1024 groups', { perThread: 64, targetGroups: 1024 }],
      ['4096 groups', { targetGroups: 4096 }],
      ['64 column outputs', { colOutputs: 64 }],
    ] as const) {
      const r = await createWebGPUBackend({ reduce });
      await reduceRows(r, tag);
      r.destroy();
    }
  }
  const square: Shape[] = sizes.map((n) => [`square ${n}`, n, n, n, false, false]);
  for (const cfg of configs) {
    const b = await createWebGPUBackend();
    if (!skip.has('mm')) await matmulRows(b, cfg, square);
    if (!skip.has('mlp') && (!cfg || cfg.tileM * cfg.tileN <= 64 * 64)) await matmulRows(b, cfg, MLP);
    b.destroy();
  }
  if (!skip.has('epi')) {
    // bias + relu: fused in the store, fused after the store, matmul then an elementwise pass.
    const b = await createWebGPUBackend();
    for (const [m, k, n] of [
      [256, 784, 512],
      [4096, 4096, 4096],
      [4096, 4096, 4096],
    ]) {
      const [x, y] = operands(b, m, k, n, false, false);
      const bias = NDArray.fromData(b, randomArray('uniform', n, 3), [n]);
      const expr = E.max(E.add(E.in(0), E.in(1)), E.f(0));
      const base = bucketedMatmulConfig(m, n, k, 1);
      const row: Record<string, unknown> = { kind: 'epilogue bias+relu', m, k, n, cfg: short(base) };
      for (const mode of ['inline', 'after'] as const) {
        b.setMatmulConfig(() => ({ ...base, epilogueAfter: mode === 'after' }));
        row[`${mode}Ms`] = +(await timeIt(b, () => x.matmul(y, { expr, inputs: [bias] }).dispose())).toFixed(4);
      }
      b.setMatmulConfig(undefined);
      row.splitMs = +(
        await timeIt(b, () => {
          const p = x.matmul(y);
          NDArray.elementwise([expr], [p, bias.reshape([1, n]).expand([m, n])])[0].dispose();
          p.dispose();
        })
      ).toFixed(4);
      row.plainMs = +(await timeIt(b, () => x.matmul(y).dispose())).toFixed(4);
      console.log(JSON.stringify(row));
      for (const t of [x, y, bias]) t.dispose();
    }
    b.destroy();
  }
  if (!skip.has('tune')) {
    const b = await createWebGPUBackend();
    const t0 = performance.now();
    const t = await tuneMatmul(b);
    console.log(JSON.stringify({ kind: 'tune', seconds: +((performance.now() - t0) / 1000).toFixed(1) }));
    for (const e of t.entries)
      console.log(
        JSON.stringify({
          kind: 'tuned',
          m: e.m,
          n: e.n,
          k: e.k,
          best: short(e.cfg),
          tflops: +((2 * e.m * e.n * e.k) / e.ms / 1e9).toFixed(2),
          all: e.times.map((x) => +((2 * e.m * e.n * e.k) / x / 1e9).toFixed(2)),
        }),
      );
    b.destroy();
  }
  const b = b0;
  if (!skip.has('ew')) await ewRows(b, 'b0 again, after everything');
  if (!skip.has('overhead')) {
    // 1,000 small dependent ops: host encoding + GPU execution per op.
    const s = NDArray.fromData(b, randomArray('uniform', 1024, 8), [1024]);
    const ms = await timeIt(
      b,
      () => {
        let t = s.map(E.mul(E.in(0), E.f(1.0001)));
        for (let i = 0; i < 999; i++) {
          const u = t.map(E.mul(E.in(0), E.f(1.0001)));
          t.dispose();
          t = u;
        }
        t.dispose();
      },
      300,
    );
    console.log(JSON.stringify({ kind: 'overhead 1000 dependent ops', usPerOp: +((ms * 1000) / 1000).toFixed(2) }));
  }
  b.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
