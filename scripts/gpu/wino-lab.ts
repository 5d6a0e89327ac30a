// Winograd lab (issue 13, helper wino): the contract conv on the WebGPU backend under several
// ConvConfig variants (the direct implicit GEMM beside the Winograd path and its tilings), on
// the bench's 5x5 and 3x3 rows and the CNN example's convs, each as the three convNd calls of a
// stride-1 conv's forward and backward. Variants are interleaved: every round times each
// variant once per GEMM, so host drift hits all alike; the table reports the best round and the
// spread. Every variant is first checked against float64 sums at sampled outputs (relative
// error ‖out − ref‖/‖ref‖ over the samples). Results: docs/tuning-log.md "wino 2026-11-25".
// Variants are Partial<ConvConfig> over the hardware default ({ wino: 0 } is the direct conv).
// Usage on the host: node wino-lab.mjs [--variants '<json array of Partial<ConvConfig>>'] [--rounds 3] [--ms 60] [--shapes 5x5,3x3]
import { ConvParams, NDArray, convNd, randomArray } from '@surf/core';
import { WebGPUBackend, createWebGPUBackend } from '@surf/webgpu';
import { sampled, timeIt } from './conv-lab-util';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const variants: Record<string, unknown>[] = JSON.parse(
  arg('--variants') ??
    JSON.stringify([{ wino: 0 }, {}, { winoTile: 2 }, { winoBlock: 2 }, { winoTile: 2, winoBlock: 2 }]),
);
const ms = Number(arg('--ms') ?? 60);
const rounds = Number(arg('--rounds') ?? 3);

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
  { label: '5x5 [128,32,28,28]->64', n: 128, c: 32, s: 28, o: 64, k: 5, pad: 2 },
  { label: 'resnet 3x3 [64,64,56,56]', n: 64, c: 64, s: 56, o: 64, k: 3, pad: 1 },
  { label: 'cnn conv2 [64,16,14,14]->32', n: 64, c: 16, s: 14, o: 32, k: 3, pad: 1 },
  // A smoke-test shape for software adapters (only with --shapes tiny).
  { label: 'tiny 5x5 [2,3,9,9]->4', n: 2, c: 3, s: 9, o: 4, k: 5, pad: 2 },
].filter((q) =>
  arg('--shapes')
    ? arg('--shapes')!
        .split(',')
        .some((w) => q.label.includes(w))
    : !q.label.startsWith('tiny'),
);

const backends: WebGPUBackend[] = [];
for (const v of variants) backends.push(await createWebGPUBackend({ conv: v }));
const tags = variants.map((v) => JSON.stringify(v));
const rows: string[] = [];
const json: unknown[] = [];
for (const sh of shapes) {
  const { n, c, s, o, k, pad } = sh;
  const flops = 2 * n * o * s * s * c * k * k;
  const total = variants.map(() => 0);
  const per: string[][] = variants.map(() => []);
  for (const name of ['fwd', 'dgrad', 'wgrad']) {
    // Per variant: operands on its backend (same data), the sampled error, then interleaved timing.
    const ops: (() => void)[] = [];
    const cleanup: (() => void)[] = [];
    for (let vi = 0; vi < variants.length; vi++) {
      const b = backends[vi];
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
      const dpad = k - 1 - pad;
      const wt = w.permute([1, 0, 2, 3]).flip([2, 3]),
        xt = x.permute([1, 0, 2, 3]),
        gt = gy.permute([1, 0, 2, 3]);
      const gm =
        name === 'fwd'
          ? { a: x, bw: w, p: one }
          : name === 'dgrad'
            ? {
                a: gy,
                bw: wt,
                p: {
                  ...one,
                  padding: [
                    [dpad, dpad],
                    [dpad, dpad],
                  ],
                } as ConvParams,
              }
            : { a: xt, bw: gt, p: one };
      const y = convNd(gm.a, gm.bw, gm.p);
      const ac = gm.a.contiguous(),
        bc = gm.bw.contiguous();
      const err = sampled(
        (await ac.data()) as Float32Array,
        gm.a.shape,
        (await bc.data()) as Float32Array,
        gm.bw.shape,
        gm.p,
        y.shape,
        (await y.data()) as Float32Array,
        2048,
      );
      ac.dispose();
      bc.dispose();
      y.dispose();
      per[vi].push(`${name} err ${err.toExponential(1)}${err > 1e-5 || !Number.isFinite(err) ? ' BAD' : ''}`);
      let last: NDArray | null = null;
      ops.push(() => {
        const r = convNd(gm.a, gm.bw, gm.p);
        last?.dispose();
        last = r;
      });
      cleanup.push(() => {
        (last as NDArray | null)?.dispose();
        for (const t of [x, w, gy, wt, xt, gt]) t.dispose();
      });
      json.push({ variant: variants[vi], shape: sh.label, gemm: name, err });
    }
    const times: number[][] = variants.map(() => []);
    for (let r = 0; r < rounds; r++)
      for (let vi = 0; vi < variants.length; vi++) times[vi].push(await timeIt(backends[vi], ops[vi], ms));
    for (let vi = 0; vi < variants.length; vi++) {
      const best = Math.min(...times[vi]),
        worst = Math.max(...times[vi]);
      total[vi] += best;
      per[vi].push(`${name} ${(flops / (best * 1e-3) / 1e9).toFixed(0)} (${best.toFixed(3)}-${worst.toFixed(3)} ms)`);
      json.push({ variant: variants[vi], shape: sh.label, gemm: name, ms: times[vi] });
      console.error(
        `${tags[vi].padEnd(50)} | ${sh.label.padEnd(28)} | ${name.padEnd(5)} | ${(flops / (best * 1e-3) / 1e9).toFixed(0).padStart(6)} GFLOP/s | ${times[vi].map((t) => t.toFixed(3)).join(' ')} ms`,
      );
    }
    cleanup.forEach((f) => f());
  }
  for (let vi = 0; vi < variants.length; vi++) {
    const line = `${tags[vi].padEnd(50)} | ${sh.label.padEnd(28)} | ${((3 * flops) / (total[vi] * 1e-3) / 1e9).toFixed(0).padStart(6)} GFLOP/s fwd+bwd ${total[vi].toFixed(3)} ms | ${per[vi].join(' | ')}`;
    rows.push(line);
    console.error(line);
  }
}
console.log(`\n${rows.join('\n')}`);
const outFile = arg('--json');
if (outFile) (await import('fs')).writeFileSync(outFile, JSON.stringify(json, null, 1));
process.exit(0);
