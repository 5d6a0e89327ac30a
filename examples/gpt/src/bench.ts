import * as surf from '@surf/nn';
import { splitSamples } from './corpus';
import { loadBrown } from './corpus-node';
import { DEFAULT_TRAIN, trainGpt } from './train';

/**
 * `npm run gpt:bench [-- --backend webgpu --shape 16,8,1024,64 --iters 10]`: times the fused
 * attention (forward, forward + backward) against the plain softmax(QKᵀ)V made of matmul and
 * softmax ops, causal, f32, then the example's training step in tokens/s. The PyTorch peer is
 * examples/gpt/bench/attention.py (same shapes). Times are ms per call, after 2 warm-up calls.
 */
async function time(backend: ReturnType<typeof surf.getBackend>, iters: number, fn: () => void): Promise<number> {
  for (let i = 0; i < 2; i++) {
    surf.tidy(fn);
    await backend.sync();
  }
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) surf.tidy(fn);
  await backend.sync();
  return (performance.now() - t0) / iters;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (k: string, d: string) => {
    const i = argv.indexOf(k);
    return i >= 0 ? argv[i + 1] : d;
  };
  const r = await surf.init({ backend: opt('--backend', 'auto') as 'auto' | 'cpu' | 'webgpu' });
  const backend = surf.getBackend();
  const [B, H, L, E] = opt('--shape', '16,8,1024,64').split(',').map(Number);
  const iters = Number(opt('--iters', '10'));
  console.log(`backend: ${r.description}; attention [${B}, ${H}, ${L}, ${E}] causal f32, ${iters} iterations`);
  surf.manualSeed(0);
  const q = surf.randn([B, H, L, E], { requiresGrad: true }),
    k = surf.randn([B, H, L, E], { requiresGrad: true }),
    v = surf.randn([B, H, L, E], { requiresGrad: true });
  const g = surf.randn([B, H, L, E]);
  const keep = surf
    .tensor(
      Uint8Array.from({ length: L * L }, (_, i) => (i % L <= Math.floor(i / L) ? 1 : 0)),
      { dtype: 'bool' },
    )
    .reshape([L, L]);
  const plain = () =>
    surf
      .where(keep, q.matmul(k.transpose(-2, -1)).mul(1 / Math.sqrt(E)), -Infinity)
      .softmax(-1)
      .matmul(v);
  const fused = () => surf.scaledDotProductAttention(q, k, v, { causal: true });
  const flops = 4 * B * H * L * L * E * 0.5; // forward matmul FLOPs, causal half
  const rows: [string, number, number][] = [];
  for (const [name, f] of [
    ['fused', fused],
    ['plain', plain],
  ] as const) {
    const fwd = await time(backend, iters, () => {
      surf.noGrad(f);
    });
    const both = await time(backend, iters, () => {
      f().backward(g);
      q.grad = null;
      k.grad = null;
      v.grad = null;
    });
    rows.push([name, fwd, both]);
  }
  for (const [name, fwd, both] of rows) {
    console.log(
      `${name.padEnd(6)} forward ${fwd.toFixed(2)} ms (${(flops / fwd / 1e6).toFixed(0)} GFLOP/s), forward+backward ${both.toFixed(2)} ms (${((3.5 * flops) / both / 1e6).toFixed(0)} GFLOP/s, FlashAttention's 3.5x count)`,
    );
  }
  [q, k, v, g, keep].forEach((t) => t.dispose());
  const steps = Number(opt('--steps', '30'));
  const data = splitSamples(loadBrown());
  let rate = 0;
  await trainGpt(
    data,
    { ...DEFAULT_TRAIN, steps, evalEvery: 1e9, evalBatches: 1 },
    {
      logEvery: steps,
      onStep: (s) => {
        if (s.step === steps) rate = s.tokensPerSec;
      },
    },
  );
  console.log(
    `gpt training step (defaults: ${DEFAULT_TRAIN.nLayer} layers, ${DEFAULT_TRAIN.nEmbd} wide, context ${DEFAULT_TRAIN.blockSize}, batch ${DEFAULT_TRAIN.batchSize}): ${Math.round(rate).toLocaleString()} tokens/s over steps 2..${steps}`,
  );
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(`gpt:bench: ${e.stack ?? e.message}`);
    process.exit(1);
  },
);
