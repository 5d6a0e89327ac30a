// Where the GPU time of examples/gpt's jitted training step goes (issue 14's tokens/s row):
// the dispatches of one replayed step (captured while jit builds its program), each timed
// alone on its own buffers (kernel-timer.ts), summed by kernel family and listed by cost; with
// the step's own wall and host time per step beside them, so host-bound and GPU-bound parts
// show. The bench's config: 4 layers, 128 wide, 4 heads, context 128, batch 32, AdamW, clipping.
// --list prints every dispatch of a replay instead of timing them.
// Usage: node scripts/run-ts.mjs scripts/jit/gpt-kernels.ts [--list] (SwiftShader here; on the GPU host
// bundle it with scripts/gpu/lab-build.sh-style esbuild and run it there).
import { createWebGPUBackend } from '@surf/webgpu';
import { Tensor, jit, manualSeed, optim, randint, setBackend } from '@surf/nn';
import { Gpt } from '@surf/example-gpt/model';
import { captureDispatches, timeEach } from './kernel-timer';

const REPS = Number(process.env.REPS ?? 20);
const STEPS = Number(process.env.STEPS ?? 100);
// GPT=layers,embd,heads,block,batch overrides the bench's config (smaller ones list quickly on SwiftShader).
const [nLayer, nEmbd, nHead, blockSize, batchSize] = (process.env.GPT ?? '4,128,4,128,32').split(',').map(Number);
const C = { vocabSize: 85, blockSize, nEmbd, nHead, nLayer, batchSize };

async function main(): Promise<void> {
  const be = await createWebGPUBackend();
  setBackend(be);
  const seen = captureDispatches(be);
  manualSeed(1);
  const model = new Gpt({
    vocabSize: C.vocabSize,
    blockSize: C.blockSize,
    nEmbd: C.nEmbd,
    nHead: C.nHead,
    nLayer: C.nLayer,
    dropout: 0,
  });
  const params = model.parameters();
  const opt = new optim.AdamW(
    [
      { params: params.filter((p) => p.ndim >= 2), weightDecay: 0.1 },
      { params: params.filter((p) => p.ndim < 2), weightDecay: 0 },
    ],
    { lr: 1e-3 },
  );
  const step = jit((x: Tensor, y: Tensor) => {
    opt.zeroGrad();
    const l = model.loss(x, y);
    l.backward();
    optim.clipGradNorm(params, 1);
    opt.step();
    return l.detach();
  });
  const x = randint(0, C.vocabSize, [C.batchSize, C.blockSize]);
  const y = randint(0, C.vocabSize, [C.batchSize, C.blockSize]);
  for (let i = 0; i < 6; i++) step(x, y).dispose();
  await be.sync();
  const s0 = be.stats();
  let host = 0;
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const h = performance.now();
    step(x, y).dispose();
    host += performance.now() - h;
  }
  await be.sync();
  const wall = (performance.now() - t0) / STEPS;
  const perStep = (be.stats().dispatches - s0.dispatches) / STEPS;
  const one = seen.slice(0, seen.length / 2);
  console.log(
    `gpt step: ${perStep} dispatches, wall ${wall.toFixed(3)} ms, host ${(host / STEPS).toFixed(3)} ms per step; ${Math.round(((C.batchSize * C.blockSize) / wall) * 1000).toLocaleString()} tokens/s`,
  );
  if (process.argv.includes('--list')) {
    // Every dispatch in replay order, by kernel name (no timing).
    one.forEach((s, i) => console.log(`${String(i).padStart(4)} groups=${s.groups} ${s.k.name.slice(0, 160)}`));
    be.destroy();
    return;
  }
  const times = await timeEach(be.device, one, REPS);
  const fam = new Map<string, { us: number; n: number }>();
  one.forEach((s, i) => {
    const f = s.k.name.split('|')[0];
    const e = fam.get(f) ?? { us: 0, n: 0 };
    fam.set(f, { us: e.us + times[i], n: e.n + 1 });
  });
  const sum = times.slice(0, one.length).reduce((a, b) => a + b, 0);
  console.log(
    `GPU: sum of the kernels alone ${(sum / 1000).toFixed(3)} ms; the list back to back ${(times[one.length] / 1000).toFixed(3)} ms`,
  );
  console.log('by family (µs, dispatches):');
  for (const [f, e] of [...fam].sort((a, b) => b[1].us - a[1].us))
    console.log(`  ${f.padEnd(34)} ${e.us.toFixed(1).padStart(8)}  ${e.n}`);
  console.log('the 25 costliest dispatches:');
  one
    .map((s, i) => ({ s, t: times[i], i }))
    .sort((a, b) => b.t - a.t)
    .slice(0, 25)
    .forEach(({ s, t, i }) =>
      console.log(
        `  #${String(i).padStart(3)} ${t.toFixed(2).padStart(8)} µs  groups=${s.groups}  ${s.k.name.slice(0, 120)}`,
      ),
    );
  be.destroy();
}
void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
