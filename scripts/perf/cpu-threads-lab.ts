// CPU-backend threads lab (eagerfix): the MLP train steps of the bench's CPU rows (nn.Sequential,
// crossEntropy, tidy per step) in wall time per step, for each thread count × matmul split
// threshold, so the default threshold is chosen from a measurement on a quiet many-core host.
// Every configuration starts from the same seed and data; the loss after the timed steps must
// be bit-identical to threads=1 (the pool splits rows, it never reorders a sum).
// Usage: node cpu-threads-lab.mjs [--threads 1,2,4] [--mflops 4,16,64,256] [--models sgd,adam] [--json out.json]
import * as nnAll from '@surf/nn';
import { cpuThreads, setCpuThreads } from '@surf/core';
import { writeFileSync } from 'node:fs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const surf: any = nnAll;
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const threadList = (arg('--threads') ?? '1,2,4').split(',').map(Number);
const mflops = (arg('--mflops') ?? '4,16,64,256').split(',').map(Number);
const models = (arg('--models') ?? 'sgd,adam').split(',');

await surf.init({ backend: 'cpu' });

interface Row {
  model: string;
  threads: number;
  mflops: number;
  msPerStep: number[];
  loss: number;
  matchesT1: boolean | null;
}

function makeStep(kind: string) {
  surf.manualSeed(42);
  const dims = kind === 'adam' ? [784, 512, 512, 10] : [784, 128, 10];
  const B = kind === 'adam' ? 256 : 64;
  const layers: unknown[] = [];
  for (let l = 0; l + 1 < dims.length; l++) {
    layers.push(new surf.nn.Linear(dims[l], dims[l + 1]));
    if (l + 2 < dims.length) layers.push(new surf.nn.ReLU());
  }
  const model = new surf.nn.Sequential(...layers);
  const opt =
    kind === 'adam'
      ? new surf.optim.Adam(model.parameters(), { lr: 1e-3 })
      : new surf.optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
  let seed = 1;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const x = surf.tensor(Float32Array.from({ length: B * 784 }, rnd)).reshape([B, 784]);
  const y = surf.tensor(
    Int32Array.from({ length: B }, () => Math.floor(rnd() * 10)),
    { dtype: 'int32' },
  );
  return () =>
    surf.tidy(() => {
      opt.zeroGrad();
      const l = surf.crossEntropy(model.forward(x), y);
      l.backward();
      opt.step();
      return l.detach();
    });
}

async function measure(kind: string, threads: number, mf: number): Promise<Row> {
  setCpuThreads({ threads, minMatmulFlops: mf * 1e6 });
  const step = makeStep(kind);
  const warm = kind === 'adam' ? 10 : 40;
  const n = kind === 'adam' ? 40 : 300;
  for (let i = 0; i < warm; i++) step().dispose();
  await new Promise((r) => setTimeout(r, 50)); // workers up
  const ms: number[] = [];
  let last: { dispose(): void; item(): Promise<number> } | null = null;
  for (let rep = 0; rep < 3; rep++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      last?.dispose();
      last = step();
    }
    const v = await last!.item();
    ms.push((performance.now() - t0) / n);
    void v;
  }
  const loss = await last!.item();
  last!.dispose();
  return { model: kind, threads: cpuThreads(), mflops: mf, msPerStep: ms, loss, matchesT1: null };
}

const rows: Row[] = [];
for (const kind of models) {
  // Threads=1 first (the reference loss), then every threshold per thread count, twice over
  // for the first thread count > 1 to see the noise.
  const ref = await measure(kind, 1, mflops[0]);
  rows.push(ref);
  for (const t of threadList.filter((t) => t > 1)) {
    for (const mf of mflops) {
      const r = await measure(kind, t, mf);
      r.matchesT1 = r.loss === ref.loss;
      rows.push(r);
    }
  }
  const again = await measure(kind, 1, mflops[0]);
  again.matchesT1 = again.loss === ref.loss;
  rows.push(again);
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`cores ${(await import('node:os')).availableParallelism()}`);
console.log('model threads minMFLOP  ms/step(median of 3)  steps/s  same-loss-as-t1');
for (const r of rows)
  console.log(
    `${r.model.padEnd(5)} ${String(r.threads).padStart(7)} ${String(r.mflops).padStart(8)}  ${med(r.msPerStep).toFixed(3).padStart(10)}  ${(1000 / med(r.msPerStep)).toFixed(0).padStart(8)}  ${r.matchesT1 ?? 'ref'}`,
  );
const out = arg('--json');
if (out) writeFileSync(out, JSON.stringify(rows, null, 1));
process.exit(0);
