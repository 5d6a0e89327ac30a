/**
 * The zoo's ResNet-style stem (16×3×67×67: conv 7×7 s2, BN, ReLU, max-pool, conv 3×3, conv 1×1
 * s2, pool, Linear; SGD momentum) trained on the CPU backend: process CPU time per step, median
 * of STEPS after warm-up. Run under `node --cpu-prof` for where the time goes.
 *   THREADS=1 node scripts/run-ts.mjs bench/src/stem-cpu-time.ts
 */
import * as nnAll from '@surf/nn';
import { setCpuThreads } from '@surf/core';
import { buildZooModel } from './zoo/surf-zoo';

await nnAll.init({ backend: 'cpu' });
if (process.env.THREADS) setCpuThreads({ threads: Number(process.env.THREADS) });
nnAll.manualSeed(0);
const STEPS = Number(process.env.STEPS ?? 15);
const built = buildZooModel(nnAll as never, { arch: 'stem', batch: 16, size: 67, width: 32 });
const opt = new nnAll.optim.SGD(built.module.parameters(), { lr: 0.01, momentum: 0.9 });
const times: number[] = [];
for (let s = 0; s < STEPS + 3; s++) {
  const { x, y } = built.batches[s % built.batches.length];
  const c0 = process.cpuUsage();
  nnAll.tidy(() => {
    opt.zeroGrad();
    const loss = built.loss(x, y);
    loss.backward();
    opt.step();
    void loss.item();
  });
  const c = process.cpuUsage(c0);
  if (s >= 3) times.push((c.user + c.system) / 1000);
}
times.sort((a, b) => a - b);
console.log(
  `stem step cpu ${times[STEPS >> 1].toFixed(1)} ms (min ${times[0].toFixed(1)}), ${(1000 / times[STEPS >> 1]).toFixed(2)} steps/s`,
);
