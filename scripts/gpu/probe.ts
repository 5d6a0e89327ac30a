// Kernel probe for tuning on a real GPU: matmul GFLOP/s per (size, config), reductions and
// elementwise GB/s, and per-op host overhead. One bundle, one run: see scripts/gpu/build.sh.
// Usage: node probe.mjs [--configs '<json array of MatmulConfig>'] [--sizes 256,1024,4096]
import { E, NDArray, randomArray } from '@surf/core';
import { DEFAULT_MATMUL, MatmulConfig, createWebGPUBackend } from '@surf/webgpu';

const arg = (name: string) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const sizes = (arg('--sizes') ?? '256,1024,2048,4096').split(',').map(Number);
const configs: MatmulConfig[] = arg('--configs') ? JSON.parse(arg('--configs')!) : [DEFAULT_MATMUL];

async function timeIt(b: { sync(): Promise<void> }, op: () => void, minMs = 200): Promise<number> {
  op(); await b.sync();
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) op();
    await b.sync();
    const ms = performance.now() - t0;
    if (ms >= minMs || reps >= 4096) return ms / reps;
    reps *= 2;
  }
}

async function main(): Promise<void> {
  for (const cfg of configs) {
    let b;
    try { b = await createWebGPUBackend({ matmul: cfg }); } catch (e) { console.log(JSON.stringify({ cfg, error: String(e) })); continue; }
    for (const n of sizes) {
      const x = NDArray.fromData(b, randomArray('uniform', n * n, 1, -1, 1), [n, n]);
      const y = NDArray.fromData(b, randomArray('uniform', n * n, 2, -1, 1), [n, n]);
      try {
        const ms = await timeIt(b, () => x.matmul(y).dispose());
        console.log(JSON.stringify({ kind: 'matmul', n, cfg, ms: +ms.toFixed(4), tflops: +((2 * n ** 3) / ms / 1e9).toFixed(2) }));
      } catch (e) { console.log(JSON.stringify({ kind: 'matmul', n, cfg, error: String(e) })); }
      x.dispose(); y.dispose();
    }
    b.destroy();
  }
  const b = await createWebGPUBackend();
  console.log(JSON.stringify({ adapter: b.description }));
  for (const n of [1 << 20, 1 << 24, 1 << 26]) {
    const a = NDArray.fromData(b, randomArray('uniform', n, 3), [n]);
    const ms = await timeIt(b, () => a.sum().dispose());
    console.log(JSON.stringify({ kind: 'sum', n, ms: +ms.toFixed(4), gbs: +((n * 4) / ms / 1e6).toFixed(1) }));
    a.dispose();
  }
  const m = NDArray.fromData(b, randomArray('uniform', 4096 * 4096, 4), [4096, 4096]);
  for (const ax of [1, 0]) {
    const ms = await timeIt(b, () => m.sum(ax).dispose());
    console.log(JSON.stringify({ kind: `sum4096 axis${ax}`, ms: +ms.toFixed(4), gbs: +((4096 * 4096 * 4) / ms / 1e6).toFixed(1) }));
  }
  const N = 1 << 24;
  const [p, q, r] = [5, 6, 7].map((s) => NDArray.fromData(b, randomArray('uniform', N, s), [N]));
  let ms = await timeIt(b, () => NDArray.elementwise([E.add(E.mul(E.in(0), E.in(1)), E.in(2))], [p, q, r])[0].dispose());
  console.log(JSON.stringify({ kind: 'a*b+c 16M', ms: +ms.toFixed(4), gbs: +((4 * N * 4) / ms / 1e6).toFixed(1) }));
  const pt = p.reshape([4096, 4096]).permute([1, 0]);
  const q2 = q.reshape([4096, 4096]); const r2 = r.reshape([4096, 4096]);
  ms = await timeIt(b, () => NDArray.elementwise([E.add(E.mul(E.in(0), E.in(1)), E.in(2))], [pt, q2, r2])[0].dispose());
  console.log(JSON.stringify({ kind: 'a^T*b+c 16M', ms: +ms.toFixed(4), gbs: +((4 * N * 4) / ms / 1e6).toFixed(1) }));
  // 1,000 small dependent ops: host encoding + GPU execution per op.
  const s = NDArray.fromData(b, randomArray('uniform', 1024, 8), [1024]);
  ms = await timeIt(b, () => {
    let t = s.map(E.mul(E.in(0), E.f(1.0001)));
    for (let i = 0; i < 999; i++) { const u = t.map(E.mul(E.in(0), E.f(1.0001))); t.dispose(); t = u; }
    t.dispose();
  }, 300);
  console.log(JSON.stringify({ kind: 'overhead 1000 dependent ops', usPerOp: +((ms * 1000) / 1000).toFixed(2) }));
  b.destroy();
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
