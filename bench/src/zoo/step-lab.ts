// Runs one zoo model's step (bench/src/zoo) for a while, eager or under jit, and prints steps/s:
// a target for `node --cpu-prof` on the GPU host (where an eager step's host time goes).
// Build: npx esbuild bench/src/zoo/step-lab.ts --bundle --platform=node --format=esm --external:webgpu --outfile=.bench/zoo-step.mjs
// Usage: node [--cpu-prof --cpu-prof-dir=$OUT] .bench/zoo-step.mjs <model> [eager|jit|tidy] [seconds]
import '@surf/webgpu';
import * as surf from '@surf/nn';
import { ZOO } from './models';
import { zooRunner } from './surf-zoo';

async function main(): Promise<void> {
  const [name = 'rnn', loop = 'eager', secs = '5'] = process.argv.slice(2);
  const z = ZOO.find((e) => e.name === name);
  if (!z) throw new Error(`no zoo model ${name}; have ${ZOO.map((e) => e.name).join(', ')}`);
  await surf.init({ backend: process.env.BACKEND === 'cpu' ? 'cpu' : 'webgpu' });
  const be = surf.getBackend();
  // 'tidy': the eager step inside surf.tidy (what an exact owner of every intermediate costs).
  const r = await zooRunner(surf as never, be, z.model, z.optimizer, loop === 'jit' ? 'jit' : 'eager');
  if (loop === 'tidy') {
    const inner = r.step;
    r.step = (i) => surf.tidy(() => void inner(i));
  }
  for (let i = 0; i < 50; i++) r.step(i);
  await r.sync();
  type Stats = { stats?: () => { dispatches: number; bindGroupsCreated: number } };
  const st = () => (be as unknown as Stats).stats?.() ?? { dispatches: 0, bindGroupsCreated: 0 };
  const s0 = st();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < Number(secs) * 1000) {
    for (let i = 0; i < 20; i++) r.step(n++);
    await r.sync();
  }
  const s = (performance.now() - t0) / 1000;
  const s1 = st();
  const per = (k: 'dispatches' | 'bindGroupsCreated') => ((s1[k] - s0[k]) / n).toFixed(1);
  console.log(
    `${name} ${loop}: ${(n / s).toFixed(1)} steps/s (${n} steps); a step: ${per('dispatches')} dispatches, ${per('bindGroupsCreated')} bind groups made`,
  );
  console.log(JSON.stringify(await r.check()));
  process.exit(0);
}
void main();
