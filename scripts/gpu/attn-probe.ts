// Attention's aligned path against the general tiled kernels in plain loops, one variant at a
// time (docs/tuning-log.md "Attention's aligned path"): wall, host and GPU time per call
// (timestamp queries on a second backend) for the forward, the backward and both, and both with
// a sync per call. The lab's interleaved cells read the small shapes' "both" 2x slow with the
// aligned path; these loops show what a training loop sees.
// Usage on the host: bash scripts/gpu/lab-build.sh attn-probe; node .bench/attn-probe.mjs
import { NDArray, attentionBackwardNd, attentionNd, randomArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';
async function main() {
  const out: string[] = [];
  for (const ts of [false, true]) {
    const b = await createWebGPUBackend({ timestamps: ts });
    for (const [B, H, L] of [
      [16, 8, 256],
      [4, 8, 1024],
    ]) {
      const n = B * H * L * 64,
        sh = [B, H, L, 64];
      const nd = (s: number) => NDArray.fromData(b, randomArray('normal', n, s), sh);
      const q = nd(1),
        k = nd(2),
        v = nd(3),
        g = nd(4);
      const opts = { scale: 0.125, causal: L === 256 };
      for (const fixed of [false, true, false, true])
        for (const mode of ['fwd', 'bwd', 'both', 'both+sync']) {
          b.setAttention({ fixed });
          const f0 = attentionNd(q, k, v, opts);
          const run = () => {
            if (mode === 'fwd') {
              const f = attentionNd(q, k, v, opts);
              f.out.dispose();
              f.lse.dispose();
              return;
            }
            if (mode === 'bwd') {
              const d = attentionBackwardNd(q, k, v, f0.out, f0.lse, g, opts);
              [d.dq, d.dk, d.dv].forEach((t) => t.dispose());
              return;
            }
            const f = attentionNd(q, k, v, opts);
            const d = attentionBackwardNd(q, k, v, f.out, f.lse, g, opts);
            [f.out, f.lse, d.dq, d.dk, d.dv].forEach((t) => t.dispose());
          };
          for (let i = 0; i < 5; i++) run();
          await b.sync();
          const N = 100;
          const s0 = b.stats();
          const t0 = performance.now();
          let host = 0;
          for (let i = 0; i < N; i++) {
            const h0 = performance.now();
            run();
            host += performance.now() - h0;
            if (mode === 'both+sync') {
              b.flush();
              await b.sync();
            }
          }
          await b.sync();
          const wall = (performance.now() - t0) / N;
          const s1 = b.stats();
          const gpu = ts ? ((s1.gpuTimeMs! - s0.gpuTimeMs!) / N).toFixed(3) : '-';
          out.push(
            `ts ${ts} ${B}x${H}x${L} fixed ${fixed} ${mode}: wall ${wall.toFixed(3)} ms, host ${(host / N).toFixed(3)}, gpu ${gpu}, submits ${(s1.submits - s0.submits) / N}, passes ${ts ? (s1.timedPasses! - s0.timedPasses!) / N : '-'}`,
          );
          console.log(out[out.length - 1]);
          f0.out.dispose();
          f0.lse.dispose();
        }
      [q, k, v, g].forEach((t) => t.dispose());
    }
    b.destroy();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
