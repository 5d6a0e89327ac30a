/**
 * eagermem: the CPU measurement behind docs/tuning-log.md "Loops without tidy": the same
 * MLP step (784-128-10, batch 64, SGD momentum, cross-entropy, loss read every 10 steps)
 * written four ways, timed by process CPU time (steadier than wall time on a shared box).
 *
 *   node scripts/run-ts.mjs bench/src/notidy-loop.ts <tidy|module|rawtidy|raw> [steps=400] [off|<minGrowthMiB>]
 *
 * module / raw: no tidy, no dispose (nn.Sequential, or x.matmul(W1).add(b1).relu()...);
 * tidy / rawtidy: the same inside tidy(). `off` turns the collections at awaits off.
 */
import { CpuBackend } from '@surf/core';
import {
  Tensor,
  configureMemory,
  crossEntropy,
  manualSeed,
  memory,
  nn,
  optim,
  randint,
  randn,
  setBackend,
  tidy,
} from '@surf/nn';

const mode = process.argv[2] ?? 'raw';
const steps = Number(process.argv[3] ?? 400);
if (process.argv[4] === 'off') configureMemory({ autoCollect: false });
else if (process.argv[4]) configureMemory({ minGrowthBytes: Number(process.argv[4]) * 2 ** 20 });
setBackend(new CpuBackend());
manualSeed(0);
const x = randn([64, 784]);
const y = randint(0, 10, [64]);
const model = new nn.Sequential(new nn.Linear(784, 128), new nn.ReLU(), new nn.Linear(128, 10));
const [W1, b1, W2, b2] = model.parameters();
const opt = new optim.SGD(model.parameters(), { lr: 0.01, momentum: 0.9 });
const forward = (): Tensor =>
  mode.startsWith('raw') ? x.matmul(W1.T).add(b1).relu().matmul(W2.T).add(b2) : model.forward(x);
const step = (): Tensor => {
  opt.zeroGrad();
  const l = crossEntropy(forward(), y);
  l.backward();
  opt.step();
  return l;
};

async function main(): Promise<void> {
  let peak = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let s = 1; s <= steps; s++) {
    const loss = mode.endsWith('tidy') ? tidy(() => step().detach()) : step();
    if (s % 10 === 0) await loss.item();
    if (mode.endsWith('tidy')) loss.dispose();
    peak = Math.max(peak, memory().bytes);
  }
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000 / steps;
  const m = memory();
  console.log(
    `${mode}: ${cpuMs.toFixed(3)} CPU ms/step, ${(steps / ((performance.now() - t0) / 1000)).toFixed(1)} steps/s wall, peak ${(peak / 2 ** 20).toFixed(2)} MiB, ${m.collections} collections`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
