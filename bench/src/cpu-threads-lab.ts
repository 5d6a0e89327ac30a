// The CPU backend's MLP 784-128-10 b64 SGD step (the bench row's loop: nn.Sequential, crossEntropy,
// tidy; and the same body under jit) under several thread settings, in interleaved blocks in one
// process so every setting sees the same machine, then each setting's median steps/s.
// Usage: node scripts/run-ts.mjs bench/src/cpu-threads-lab.ts [--rounds 9] [--block 200]
//   [--configs "1;2;2,spin=2000000;2,chunks=2"]   (threads[,spin=N][,chunks=N][,mm=flops][,ew=elements])
import { cpus, loadavg } from 'node:os';
import * as nn from '@surf/nn';
import { setCpuThreads, startCpuThreads } from '@surf/core';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const surf: any = nn;
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const rounds = +arg('--rounds', '9');
const block = +arg('--block', '200');
const configs = arg('--configs', '1;2;2,spin=200000;2,spin=2000000;2,chunks=2;2,chunks=6')
  .split(';')
  .map((c) => {
    const [th, ...kv] = c.split(',');
    const o: Record<string, number> = { threads: +th };
    for (const p of kv) {
      const [k, v] = p.split('=');
      o[{ spin: 'spin', chunks: 'chunksPerThread', mm: 'minMatmulFlops', ew: 'minElementwise' }[k] ?? k] = +v;
    }
    return { name: c, opts: o };
  });

await surf.init({ backend: 'cpu' });
surf.manualSeed(42);
const model = new surf.nn.Sequential(new surf.nn.Linear(784, 128), new surf.nn.ReLU(), new surf.nn.Linear(128, 10));
const opt = new surf.optim.SGD(model.parameters(), { lr: 0.05 });
const batches = Array.from({ length: 8 }, () => ({
  x: surf.tensor(Float32Array.from({ length: 64 * 784 }, () => Math.random())).reshape([64, 784]),
  y: surf.tensor(
    Int32Array.from({ length: 64 }, () => Math.floor(Math.random() * 10)),
    { dtype: 'int32' },
  ),
}));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const body = (x: any, y: any) => {
  opt.zeroGrad();
  const l = surf.crossEntropy(model.forward(x), y);
  l.backward();
  opt.step();
  return l.detach();
};
const jitted = surf.jit(body);
const loops = {
  eager: (i: number) => surf.tidy(() => body(batches[i % 8].x, batches[i % 8].y)),
  jit: (i: number) => jitted(batches[i % 8].x, batches[i % 8].y),
};

const rates = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  for (const c of configs) {
    setCpuThreads(c.opts);
    await startCpuThreads();
    for (const [ln, step] of Object.entries(loops)) {
      for (let i = 0; i < 20; i++) step(i).dispose();
      const t0 = performance.now();
      let last = null;
      for (let i = 0; i < block; i++) {
        last?.dispose();
        last = step(i);
      }
      await last.item();
      last.dispose();
      const key = `${c.name} ${ln}`;
      (rates.get(key) ?? rates.set(key, []).get(key)!).push(block / ((performance.now() - t0) / 1000));
    }
  }
}
console.log(
  `MLP 784-128-10 b64 SGD on the CPU backend: ${cpus()[0].model} x${cpus().length}, Node ${process.version}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}; ${rounds} rounds of ${block} steps, median (min-max) steps/s`,
);
for (const [k, v] of rates) {
  v.sort((a, b) => a - b);
  console.log(
    `${k.padEnd(34)} ${v[v.length >> 1].toFixed(0).padStart(6)}  (${v[0].toFixed(0)}-${v[v.length - 1].toFixed(0)})`,
  );
}
process.exit(0);
