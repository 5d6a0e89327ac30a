// Conv lab for issue 13 (convk): the contract conv on the WebGPU backend under several tiling
// configs, for the bench's conv shapes and the CNN example's, each as its three GEMMs (forward,
// data gradient, weight gradient: the same convNd calls autograd's conv makes for a stride-1
// conv). Every variant is checked against float64 sums at sampled outputs (output poisoned by
// a fresh allocation each call), then timed: warm-up, back-to-back calls, one sync per round,
// median of 5 rounds. Each variant is timed twice to show the noise. Results: docs/tuning-log.md.
// Usage on the host: node conv-lab.mjs [--variants '<json array of Partial<ConvConfig>>'] [--ms 150] [--json out.json]
import { ConvParams, NDArray, convNd, randomArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';
import { sampled, timeIt } from './conv-lab-util';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const variants: Record<string, unknown>[] = JSON.parse(
  arg('--variants') ??
    JSON.stringify([
      {},
      { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4 },
      { tileM: 128, tileN: 128, tileK: 16, threadM: 8, threadN: 8 },
      { tileM: 64, tileN: 128, tileK: 32, threadM: 8, threadN: 8 },
      { tileM: 32, tileN: 128, tileK: 16, threadM: 4, threadN: 8 },
      { splitGroups: 0 },
      { splitGroups: 1056 },
    ]),
);
const ms = Number(arg('--ms') ?? 150);

interface Shape {
  label: string;
  n: number;
  c: number;
  s: number;
  o: number;
  k: number;
  pad: number;
}
const shapes: Shape[] = [
  { label: 'resnet 3x3 [64,64,56,56]', n: 64, c: 64, s: 56, o: 64, k: 3, pad: 1 },
  { label: '5x5 [128,32,28,28]->64', n: 128, c: 32, s: 28, o: 64, k: 5, pad: 2 },
  { label: 'cnn conv1 [64,1,28,28]->16', n: 64, c: 1, s: 28, o: 16, k: 3, pad: 1 },
  { label: 'cnn conv2 [64,16,14,14]->32', n: 64, c: 16, s: 14, o: 32, k: 3, pad: 1 },
].filter(
  (q) =>
    !arg('--shapes') ||
    arg('--shapes')!
      .split(',')
      .some((w) => q.label.includes(w)),
);

const rows: string[] = [];
const json: unknown[] = [];
for (const v of variants) {
  // The direct implicit GEMM's tilings: the Winograd paths (wino-lab.ts) stay off unless a variant asks.
  const b = await createWebGPUBackend({ conv: { wino: 0, ...v } });
  const tag = JSON.stringify(v);
  for (const sh of shapes) {
    const { n, c, s, o, k, pad } = sh;
    const x = NDArray.fromData(b, randomArray('uniform', n * c * s * s, 1, -1, 1), [n, c, s, s]);
    const w = NDArray.fromData(b, randomArray('uniform', o * c * k * k, 2, -1, 1), [o, c, k, k]);
    const gy = NDArray.fromData(b, randomArray('uniform', n * o * s * s, 3, -1, 1), [n, o, s, s]);
    const one: ConvParams = {
      stride: [1, 1],
      padding: [
        [pad, pad],
        [pad, pad],
      ],
      dilation: [1, 1],
      lhsDilation: [1, 1],
      groups: 1,
    };
    // Data gradient: gy with the flipped, channel-swapped weight; weight gradient: x [C, N, ...] with gy [O, N, ...] as the kernel.
    const wt = w.permute([1, 0, 2, 3]).flip([2, 3]);
    const dpad = k - 1 - pad;
    const dgp: ConvParams = {
      ...one,
      padding: [
        [dpad, dpad],
        [dpad, dpad],
      ],
    };
    const xt = x.permute([1, 0, 2, 3]);
    const gt = gy.permute([1, 0, 2, 3]);
    const wgp: ConvParams = {
      ...one,
      padding: [
        [pad, pad],
        [pad, pad],
      ],
    };
    const gemms: { name: string; a: NDArray; bw: NDArray; p: ConvParams }[] = [
      { name: 'fwd', a: x, bw: w, p: one },
      { name: 'dgrad', a: gy, bw: wt, p: dgp },
      { name: 'wgrad', a: xt, bw: gt, p: wgp },
    ];
    const flops = 2 * n * o * s * s * c * k * k;
    let totalMs = 0;
    for (const gm of gemms) {
      const y = convNd(gm.a, gm.bw, gm.p);
      const ac = gm.a.contiguous(),
        bc = gm.bw.contiguous();
      const ad = (await ac.data()) as Float32Array,
        bd = (await bc.data()) as Float32Array;
      ac.dispose();
      bc.dispose();
      const err = sampled(ad, gm.a.shape, bd, gm.bw.shape, gm.p, y.shape, (await y.data()) as Float32Array);
      y.dispose();
      let last: NDArray | null = null;
      const op = () => {
        const r = convNd(gm.a, gm.bw, gm.p);
        last?.dispose();
        last = r;
      };
      const t1 = await timeIt(b, op, ms),
        t2 = await timeIt(b, op, ms);
      const t = Math.min(t1, t2);
      totalMs += t;
      const line = `${tag.padEnd(58)} | ${sh.label.padEnd(28)} | ${gm.name.padEnd(5)} | ${(flops / (t * 1e-3) / 1e9).toFixed(0).padStart(6)} GFLOP/s | ${t1.toFixed(3)} / ${t2.toFixed(3)} ms | err ${err.toExponential(1)}${err > 1e-5 || !Number.isFinite(err) ? ' BAD' : ''}`;
      console.error(line);
      json.push({ variant: v, shape: sh.label, gemm: gm.name, ms: [t1, t2], gflops: flops / (t * 1e-3) / 1e9, err });
      if (last) (last as NDArray).dispose();
    }
    const line = `${tag.padEnd(58)} | ${sh.label.padEnd(28)} | all   | ${((3 * flops) / (totalMs * 1e-3) / 1e9).toFixed(0).padStart(6)} GFLOP/s | ${totalMs.toFixed(3)} ms fwd+bwd`;
    rows.push(line);
    console.error(line);
    for (const t of [x, w, gy, wt, xt, gt]) t.dispose();
  }
  b.destroy?.();
}
console.log(`\n${rows.join('\n')}`);
const outFile = arg('--json');
if (outFile) (await import('fs')).writeFileSync(outFile, JSON.stringify(json, null, 1));
process.exit(0);
