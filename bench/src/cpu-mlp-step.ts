// One MLP 784-128-10 training step (batch 64, SGD) on the CPU backend, written with core's
// NDArray ops the way autograd issues them, timed per op kind. Prints steps/s and the share
// of each kind. Usage: node scripts/run-ts.mjs bench/src/cpu-mlp-step.ts [--steps N] [--js-matmul] [--threads N]
// `--threads 1,2` instead alternates blocks of steps between thread counts (--rounds R, default
// 15) and prints each count's median steps/s: on a shared box both see the same load.
import { cpus, loadavg } from 'node:os';
import { CpuBackend, E, NDArray, createBackend, cpuThreads } from '@surf/core';
import { setMatmulImpl } from '@surf/core/testing';

const thrIdx = process.argv.indexOf('--threads');
// The factory waits until the CPU backend's worker threads run.
const thrList = thrIdx > 0 ? process.argv[thrIdx + 1].split(',').map(Number) : [];
const be = (await createBackend('cpu', thrList.length ? { threads: thrList[0] } : undefined)) as CpuBackend;
if (process.argv.includes('--js-matmul')) setMatmulImpl('js');
const B = 64,
  D = 784,
  H = 128,
  C = 10,
  lr = 0.1;
const stepsArg = process.argv.indexOf('--steps');
const steps = stepsArg > 0 ? +process.argv[stepsArg + 1] : 300;

const randn = (n: number, scale: number) => Float32Array.from({ length: n }, () => (Math.random() * 2 - 1) * scale);
let W1 = NDArray.fromData(be, randn(D * H, 0.05), [D, H]);
let b1 = NDArray.fromData(be, new Float32Array(H), [H]);
let W2 = NDArray.fromData(be, randn(H * C, 0.1), [H, C]);
let b2 = NDArray.fromData(be, new Float32Array(C), [C]);
const x = NDArray.fromData(
  be,
  Float32Array.from({ length: B * D }, () => Math.random()),
  [B, D],
);
const labels = Int32Array.from({ length: B }, () => Math.floor(Math.random() * C));
const onehot = NDArray.fromData(
  be,
  Float32Array.from({ length: B * C }, (_, i) => (labels[Math.floor(i / C)] === i % C ? 1 : 0)),
  [B, C],
);

const times = new Map<string, number>();
function t<T>(kind: string, f: () => T): T {
  const t0 = performance.now();
  const r = f();
  times.set(kind, (times.get(kind) ?? 0) + performance.now() - t0);
  return r;
}
const T = (a: NDArray) => a.permute([1, 0]);

function step(): number {
  const h1 = t('matmul', () => x.matmul(W1));
  const [z1, a1] = t('elementwise', () =>
    NDArray.elementwise([E.add(E.in(0), E.in(1)), E.max(E.add(E.in(0), E.in(1)), E.f(0))], [h1, b1]),
  );
  const l0 = t('matmul', () => a1.matmul(W2));
  const logits = t('elementwise', () => l0.map(E.add(E.in(0), E.in(1)), b2));
  // log-softmax and cross-entropy
  const mx = t('reduce', () => logits.max(1, true));
  const z = t('elementwise', () => logits.map(E.sub(E.in(0), E.in(1)), mx));
  const ez = t('elementwise', () => z.map(E.exp(E.in(0))));
  const se = t('reduce', () => ez.sum(1, true));
  const logp = t('elementwise', () => z.map(E.sub(E.in(0), E.log(E.in(1))), se));
  const picked = t('elementwise', () => logp.map(E.mul(E.in(0), E.in(1)), onehot));
  const lossArr = t('reduce', () => picked.sum());
  // backward
  const dlog = t('elementwise', () => logp.map(E.mul(E.sub(E.exp(E.in(0)), E.in(1)), E.f(1 / B)), onehot));
  const dW2 = t('matmul', () => T(a1).matmul(dlog));
  const db2 = t('reduce', () => dlog.sum(0));
  const da1 = t('matmul', () => dlog.matmul(T(W2)));
  const dz1 = t('elementwise', () => z1.map(E.where(E.lt(E.f(0), E.in(0)), E.in(1), E.f(0)), da1));
  const dW1 = t('matmul', () => T(x).matmul(dz1));
  const db1 = t('reduce', () => dz1.sum(0));
  // SGD
  const upd = (p: NDArray, g: NDArray) => t('elementwise', () => p.map(E.sub(E.in(0), E.mul(E.f(lr), E.in(1))), g));
  const nW1 = upd(W1, dW1),
    nb1 = upd(b1, db1),
    nW2 = upd(W2, dW2),
    nb2 = upd(b2, db2);
  const loss = -(be.readSync(lossArr.storage) as Float32Array)[0] / B;
  for (const a of [
    h1,
    z1,
    a1,
    l0,
    logits,
    mx,
    z,
    ez,
    se,
    logp,
    picked,
    lossArr,
    dlog,
    dW2,
    db2,
    da1,
    dz1,
    dW1,
    db1,
    W1,
    b1,
    W2,
    b2,
  ])
    a.dispose();
  W1 = nW1;
  b1 = nb1;
  W2 = nW2;
  b2 = nb2;
  return loss;
}

for (let i = 0; i < 30; i++) step();
if (thrList.length > 1) {
  const rIdx = process.argv.indexOf('--rounds');
  const rounds = rIdx > 0 ? +process.argv[rIdx + 1] : 15;
  const block = Math.max(10, Math.round(steps / rounds));
  const rates = new Map<number, number[]>(thrList.map((t) => [t, []]));
  for (let r = 0; r < rounds; r++) {
    for (const th of thrList) {
      await createBackend('cpu', { threads: th });
      for (let i = 0; i < 5; i++) step();
      const t0 = performance.now();
      for (let i = 0; i < block; i++) step();
      rates.get(th)!.push(block / ((performance.now() - t0) / 1000));
    }
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  console.log(
    `MLP 784-128-10 b64 SGD (core NDArray ops) on ${cpus()[0].model} x${cpus().length}, Node ${process.version}, load ${loadavg()
      .map((v) => v.toFixed(1))
      .join(' ')}; ${rounds} alternating blocks of ${block} steps`,
  );
  for (const th of thrList) {
    const v = rates.get(th)!;
    console.log(
      `  ${th} thread(s): median ${median(v).toFixed(1)} steps/s, best ${Math.max(...v).toFixed(1)}, worst ${Math.min(...v).toFixed(1)}`,
    );
  }
  process.exit(0);
}
times.clear();
const first = step();
const t0 = performance.now();
let last = first;
for (let i = 0; i < steps; i++) last = step();
const ms = performance.now() - t0;
console.log(
  `MLP 784-128-10, batch 64, SGD, ${process.argv.includes('--js-matmul') ? 'JS' : 'auto (WASM SIMD)'} matmul, ${cpuThreads()} thread(s), on ${cpus()[0].model}, Node ${process.version}, load ${loadavg()[0].toFixed(1)}: ${(steps / (ms / 1000)).toFixed(1)} steps/s (${(ms / steps).toFixed(2)} ms/step); loss ${first.toFixed(3)} -> ${last.toFixed(3)}`,
);
const total = [...times.values()].reduce((a, b) => a + b, 0);
for (const [k, v] of [...times].sort((a, b) => b[1] - a[1]))
  console.log(`  ${k.padEnd(12)} ${(v / (steps + 1)).toFixed(3)} ms/step  ${((100 * v) / total).toFixed(0)}%`);
