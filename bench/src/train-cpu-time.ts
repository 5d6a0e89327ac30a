// CPU-backend MLP train step (nn.Sequential, crossEntropy, SGD momentum or Adam, tidy per step): process CPU time per step (compare CPU, not wall, on a loaded box). Env: N steps (300), OPT=sgd|adam, MOM=0 (plain SGD, as the bench row), TH=threads, DIMS=784,128,10 and B=64 (tiny ones, e.g. DIMS=8,8,2 B=4, leave only the per-step JS). Usage: node scripts/run-ts.mjs bench/src/train-cpu-time.ts
import * as nnAll from '@surf/nn';
const surf: any = nnAll;
const N = +(process.env.N ?? 300);
const opt_ = process.env.OPT ?? 'sgd';
await surf.init(process.env.TH ? { backend: 'cpu', threads: +process.env.TH } : { backend: 'cpu' });
surf.manualSeed(42);
const dims = process.env.DIMS
  ? process.env.DIMS.split(',').map(Number)
  : opt_ === 'adam'
    ? [784, 512, 512, 10]
    : [784, 128, 10];
const B = process.env.B ? +process.env.B : opt_ === 'adam' ? 256 : 64;
const layers: any[] = [];
for (let l = 0; l + 1 < dims.length; l++) {
  layers.push(new surf.nn.Linear(dims[l], dims[l + 1]));
  if (l + 2 < dims.length) layers.push(new surf.nn.ReLU());
}
const model = new surf.nn.Sequential(...layers);
const opt =
  opt_ === 'adam'
    ? new surf.optim.Adam(model.parameters(), { lr: 1e-3 })
    : new surf.optim.SGD(model.parameters(), process.env.MOM === '0' ? { lr: 0.05 } : { lr: 0.05, momentum: 0.9 });
const x = surf.tensor(Float32Array.from({ length: B * dims[0] }, () => Math.random())).reshape([B, dims[0]]);
const y = surf.tensor(
  Int32Array.from({ length: B }, () => Math.floor(Math.random() * dims[dims.length - 1])),
  { dtype: 'int32' },
);
const step = () =>
  surf.tidy(() => {
    opt.zeroGrad();
    const l = surf.crossEntropy(model.forward(x), y);
    l.backward();
    opt.step();
    return l.detach();
  });
for (let i = 0; i < 30; i++) step().dispose();
await new Promise((r) => setTimeout(r, 0));
const c0 = process.cpuUsage();
const t0 = performance.now();
let last: any;
for (let i = 0; i < N; i++) {
  last?.dispose();
  last = step();
}
const v = await last.item();
const c = process.cpuUsage(c0);
const wall = performance.now() - t0;
console.log(
  `${opt_} N=${N} cpu ${((c.user + c.system) / 1000 / N).toFixed(3)} ms/step (user ${(c.user / 1000 / N).toFixed(3)}) wall ${(wall / N).toFixed(3)} ms/step loss ${v}`,
);
