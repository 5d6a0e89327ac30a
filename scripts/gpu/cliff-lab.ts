// Shape-cliff lab: matmuls (plain, transposed, batched, tiny m, tiny k) and the pieces of plain
// attention, timed through the public tensor API on WebGPU (wall time around N calls + a sync,
// after a warm-up). Prints GFLOP/s (matmul) or µs per call. Its PyTorch twin is cliff_lab.py.
// Usage on the host: node .bench/cliff-lab.mjs [--json out.json]
import { writeFileSync } from 'fs';
import '@surf/webgpu';
import * as surf from '@surf/nn';

type T = surf.Tensor;
const out: Record<string, number> = {};

async function time(label: string, fn: () => T | void, work = 0): Promise<void> {
  if (process.env.ONLY && !label.startsWith(process.env.ONLY)) return;
  const be = surf.getBackend();
  for (let i = 0; i < 3; i++) surf.tidy(() => fn());
  be.flush();
  await be.sync();
  let n = 1;
  let ms = 0;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) surf.tidy(() => fn());
    be.flush();
    await be.sync();
    ms = performance.now() - t0;
    if (ms > 200 || n >= 4096) break;
    n *= 2;
  }
  const per = ms / n;
  const v = work ? work / (per / 1000) / 1e9 : per * 1000;
  out[label] = v;
  console.log(`${label.padEnd(48)} ${v.toFixed(1).padStart(10)} ${work ? 'GFLOP/s' : 'µs'}`);
}

async function main(): Promise<void> {
  // POOL_GIB=n: the buffer pool may keep n GiB of free buffers (A/B of the pool's limit).
  const poolGiB = Number(process.env.POOL_GIB ?? 0);
  await surf.init({ backend: 'webgpu', ...(poolGiB ? { options: { poolLimitBytes: poolGiB * 2 ** 30 } } : {}) });
  // NOGC=1: no collections (A/B of the memory policy's cost).
  if (process.env.NOGC) surf.configureMemory({ autoCollect: false });
  surf.manualSeed(1);
  const mm: [string, number[], number[], boolean, boolean][] = [
    ['mm 1024^3', [1024, 1024], [1024, 1024], false, false],
    ['mm 1000x1000x300', [100 * 10, 1000], [1000, 300], false, false],
    ['mm 100x1000x300', [100, 1000], [1000, 300], false, false],
    ['mm 100x1000x300 bT', [100, 1000], [300, 1000], false, true],
    ['mm 1000x100x300 aT (wgrad)', [100, 1000], [100, 300], true, false],
    ['mm 3x4099x515', [3, 4099], [4099, 515], false, false],
    ['mm 4099x3x515 aT (wgrad k=3)', [3, 4099], [3, 515], true, false],
    ['mm 3x515x4099 bT (dgrad)', [3, 515], [4099, 515], false, true],
    ['mm 1x37x129', [1, 37], [37, 129], false, false],
    ['mm 13x71x71', [13, 71], [71, 71], false, false],
    ['mm 1848x200x800', [1848, 200], [200, 800], false, false],
    ['mm 1848x800x200', [1848, 800], [800, 200], false, false],
    ['mm 200x1848x800 aT', [1848, 200], [1848, 800], true, false],
    ['mm 512x1023x257 bT', [512, 1023], [257, 1023], false, true],
    ['mm 32x96x30011', [32, 96], [96, 30011], false, false],
    ['mm 96x32x30011 aT', [32, 96], [32, 30011], true, false],
  ];
  for (const [label, as, bs, ta, tb] of mm) {
    const a = surf.randn(as);
    const b = surf.randn(bs);
    const A = ta ? a.transpose(0, 1) : a;
    const B = tb ? b.transpose(0, 1) : b;
    const m = A.shape[0];
    const k = A.shape[1];
    const n = B.shape[1];
    await time(label, () => A.matmul(B), 2 * m * k * n);
    a.dispose();
    b.dispose();
  }
  // Plain attention, the bench row's shape [16, 8, 1024, 64], causal.
  const [Bn, H, L, E] = [16, 8, 1024, 64];
  const q = surf.randn([Bn, H, L, E]).requiresGrad_();
  const k = surf.randn([Bn, H, L, E]).requiresGrad_();
  const v = surf.randn([Bn, H, L, E]).requiresGrad_();
  const mask = surf.ones([L, L]).tril().gt(0);
  const s = 1 / Math.sqrt(E);
  const bmm = 2 * Bn * H * L * L * E;
  await time('attn q·kT', () => q.matmul(k.transpose(-2, -1)), bmm);
  const sc = surf.noGrad(() => q.matmul(k.transpose(-2, -1)).mul(s));
  await time('attn where(mask, s, -inf)', () => surf.where(mask, sc, -Infinity));
  await time('attn softmax(-1) [16,8,1024,1024]', () => sc.softmax(-1));
  const p = surf.noGrad(() => sc.softmax(-1));
  await time('attn p·v', () => p.matmul(v), bmm);
  const fwd = () =>
    surf
      .where(mask, q.matmul(k.transpose(-2, -1)).mul(s), -Infinity)
      .softmax(-1)
      .matmul(v);
  await time('attn plain fwd', () => surf.noGrad(fwd), 2 * bmm);
  const g = surf.randn([Bn, H, L, E]);
  await time(
    'attn plain fwd+bwd',
    () => {
      fwd().backward(g);
      q.grad = null;
      k.grad = null;
      v.grad = null;
    },
    6 * bmm,
  );
  await time(
    'attn fused fwd+bwd',
    () => {
      surf.scaledDotProductAttention(q, k, v, { causal: true }).backward(g);
      q.grad = null;
      k.grad = null;
      v.grad = null;
    },
    6 * bmm * 0.5,
  );
  const j = process.argv.indexOf('--json');
  if (j > 0) writeFileSync(process.argv[j + 1], JSON.stringify(out, null, 1));
  process.exit(0);
}
void main();
