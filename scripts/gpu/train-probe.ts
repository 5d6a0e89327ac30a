// Training-step probe: steps/s of small MLPs through the public @surf/nn API, the kernel
// dispatches and queue submits one step costs, and the per-op host overhead (1,000 small
// dependent ops). Bundled by scripts/gpu/build.sh; runs on SwiftShader too (use --quick).
// Usage: node train-probe.mjs [--quick] [--steps N] [--only small|big|ops] [--backend cpu] [--toggles a,b]
import { E, NDArray } from '@surf/core';
import { Tensor, crossEntropy, getBackend, init, nn, optim, randint, randn, tidy } from '@surf/nn';
import type { WebGPUStats } from '@surf/webgpu';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const quick = process.argv.includes('--quick');
const only = arg('--only');

type Stats = () => WebGPUStats | null;
const stats: Stats = () => {
  const b = getBackend() as unknown as { stats?: () => WebGPUStats };
  return b.stats ? b.stats() : null;
};
const diff = (a: WebGPUStats | null, b: WebGPUStats | null, n: number) =>
  a && b
    ? {
        dispatches: (b.dispatches - a.dispatches) / n,
        submits: (b.submits - a.submits) / n,
        bindGroupsCreated: (b.bindGroupsCreated - a.bindGroupsCreated) / n,
        pipelinesCreated: (b.pipelinesCreated - a.pipelinesCreated) / n,
      }
    : null;

interface Spec {
  name: string;
  dims: number[];
  batch: number;
  opt: 'sgd' | 'adam';
}

async function trainProbe(spec: Spec, steps: number, warm: number): Promise<void> {
  const layers: nn.Module[] = [];
  for (let i = 0; i + 1 < spec.dims.length; i++) {
    layers.push(new nn.Linear(spec.dims[i], spec.dims[i + 1]));
    if (i + 2 < spec.dims.length) layers.push(new nn.ReLU());
  }
  const model = new nn.Sequential(...layers);
  const opt =
    spec.opt === 'sgd'
      ? new optim.SGD(model.parameters(), { lr: 0.01 })
      : new optim.Adam(model.parameters(), { lr: 1e-3 });
  // Four batches uploaded once; steps rotate through them (row-range views, no upload per step).
  const nb = 4;
  const X = randn([nb * spec.batch, spec.dims[0]]);
  const Y = randint(0, spec.dims[spec.dims.length - 1], [nb * spec.batch]);
  const xs = Array.from({ length: nb }, (_, i) => X.narrow(0, i * spec.batch, spec.batch));
  const ys = Array.from({ length: nb }, (_, i) => Y.narrow(0, i * spec.batch, spec.batch));
  const step = (i: number): Tensor =>
    tidy(() => {
      opt.zeroGrad();
      const loss = crossEntropy(model.forward(xs[i % nb]), ys[i % nb]);
      loss.backward();
      opt.step();
      return loss;
    });
  const b = getBackend();
  let first = 0,
    last = 0;
  for (let i = 0; i < warm; i++) {
    const l = step(i);
    if (i === 0) first = await l.item();
    l.dispose();
  }
  await b.sync();
  // Rounds of each mode; the median is reported (the best too: host timings on a shared
  // machine have outliers).
  const rounds = quick ? 1 : 5;
  const sync: number[] = [],
    rec: number[] = [],
    read: number[] = [];
  const s0 = stats();
  for (let r = 0; r < rounds; r++) {
    // (1) synchronised only at the end; `rec` is when the host finished recording (the GPU
    // has been running the batches submitted so far): sync ≈ rec means host-bound.
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step(i).dispose();
    const t1 = performance.now();
    await b.sync();
    sync.push((performance.now() - t0) / steps);
    rec.push((t1 - t0) / steps);
  }
  const per = diff(s0, stats(), steps * rounds);
  for (let r = 0; r < rounds; r++) {
    // (2) the loss read back every step (a training loop that logs or checks it).
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) {
      const l = step(i);
      last = await l.item();
      l.dispose();
    }
    read.push((performance.now() - t0) / steps);
  }
  const med = (v: number[]) => v.slice().sort((x, y) => x - y)[v.length >> 1];
  const ms = (v: number) => +v.toFixed(4);
  console.log(
    JSON.stringify({
      kind: 'train',
      model: spec.name,
      batch: spec.batch,
      opt: spec.opt,
      steps,
      rounds,
      stepsPerSecSyncEnd: +(1000 / med(sync)).toFixed(1),
      bestStepsPerSecSyncEnd: +(1000 / Math.min(...sync)).toFixed(1),
      stepsPerSecReadback: +(1000 / med(read)).toFixed(1),
      bestStepsPerSecReadback: +(1000 / Math.min(...read)).toFixed(1),
      msPerStep: { syncEnd: ms(med(sync)), hostRecord: ms(med(rec)), readback: ms(med(read)) },
      perStep: per,
      lossFirst: +first.toFixed(4),
      lossLast: +last.toFixed(4),
    }),
  );
  opt.dispose();
  for (const p of model.parameters()) p.dispose();
  [X, Y, ...xs, ...ys].forEach((t) => t.dispose());
}

async function opsProbe(n: number): Promise<void> {
  const b = getBackend();
  const s = NDArray.fromData(b, new Float32Array(1024).fill(1), [1024]);
  const chain = () => {
    let t = s.map(E.mul(E.in(0), E.f(1.0001)));
    for (let i = 1; i < n; i++) {
      const u = t.map(E.mul(E.in(0), E.f(1.0001)));
      t.dispose();
      t = u;
    }
    t.dispose();
  };
  chain();
  await b.sync();
  let best = Infinity,
    bestHost = Infinity;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    chain();
    const t1 = performance.now();
    await b.sync();
    const t2 = performance.now();
    best = Math.min(best, t2 - t0);
    bestHost = Math.min(bestHost, t1 - t0);
  }
  const s0 = stats();
  chain();
  await b.sync();
  const per = diff(s0, stats(), n);
  console.log(
    JSON.stringify({
      kind: 'overhead',
      ops: n,
      usPerOp: +((best * 1000) / n).toFixed(2),
      usPerOpHostOnly: +((bestHost * 1000) / n).toFixed(2),
      perOp: per,
    }),
  );
  s.dispose();
}

async function main(): Promise<void> {
  const be = arg('--backend') ?? 'webgpu';
  // --toggles skip_validation,...: Dawn device toggles, to measure what validation costs.
  const toggles = arg('--toggles')?.split(',');
  const r = await init({ backend: be as 'webgpu' | 'cpu', options: toggles ? { dawnToggles: toggles } : undefined });
  console.log(JSON.stringify({ backend: r.backend, description: r.description, toggles: toggles ?? [] }));
  const steps = Number(arg('--steps') ?? (quick ? 5 : 400));
  const warm = quick ? 3 : 30;
  const specs: Spec[] = quick
    ? [
        { name: 'mlp-784-128-10', dims: [784, 128, 10], batch: 64, opt: 'sgd' },
        { name: 'mlp-64-32-32-10', dims: [64, 32, 32, 10], batch: 16, opt: 'adam' },
      ]
    : [
        { name: 'mlp-784-128-10', dims: [784, 128, 10], batch: 64, opt: 'sgd' },
        { name: 'mlp-784-512-512-10', dims: [784, 512, 512, 10], batch: 256, opt: 'adam' },
      ];
  if (!only || only === 'small') await trainProbe(specs[0], steps, warm);
  if (!only || only === 'big') await trainProbe(specs[1], steps, warm);
  if (!only || only === 'ops') await opsProbe(quick ? 200 : 1000);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
