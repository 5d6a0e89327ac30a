// Matmul lab for issue 15 (helper mm2): configs of the real backend's generator timed against
// each other in one process, interleaved round by round, on the squares and the MLP's layer
// shapes. Every (config, shape) is first checked on fresh random inputs: 256 sampled outputs
// against float64 sums, and every output finite (fresh inputs per check, so an output buffer
// left over from the previous config cannot pass for this one's).
// Usage on the host: node .bench/mm2-lab.mjs [--only 1024,2048,4096,mlp (and 128: a smoke test)] [--set 1|2|final] [--rotate] [--rounds 7] [--batch-ms 25]
//   [--json out.json]. Results go to docs/tuning-log.md ("mm2 2026-11-25").
import { writeFileSync } from 'fs';
import { NDArray, randomArray } from '@surf/core';
import { MatmulConfig, WebGPUBackend, bucketedMatmulConfig, createWebGPUBackend } from '@surf/webgpu';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const only = new Set((arg('--only') ?? '1024,2048,4096,mlp').split(','));
const rounds = Number(arg('--rounds') ?? 7);
const batchMs = Number(arg('--batch-ms') ?? 25);
const rotate = process.argv.includes('--rotate');

// The two aligned buckets of tune/choose.ts and the MLP's bucket, then the new knobs on them.
const HUGE: MatmulConfig = {
  tileM: 128,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  vec4: true,
  interleave: true,
  rows: true,
  doubleBuffer: true,
};
const LARGE: MatmulConfig = { ...HUGE, tileN: 64, threadN: 4 };
const MID: MatmulConfig = { tileM: 32, tileN: 32, tileK: 32, threadM: 4, threadN: 4, vec4: true, rows: true };
type Variant = [string, MatmulConfig | null];
const knobs = (tag: string, c: MatmulConfig): Variant[] => [
  [`${tag}`, c],
  [`${tag} z`, { ...c, swizzleA: true }],
  [`${tag} w8`, { ...c, warpCols: 8 }],
  [`${tag} w8 z`, { ...c, warpCols: 8, swizzleA: true }],
  [`${tag} w4 z`, { ...c, warpCols: 4, swizzleA: true }],
];
// Run 1's set (--set 1), run 2's (--set 2: without interleave, and larger tiles of 8x16 / 16x8
// per thread, k-steps of 8: 16 would need more than 48 KB double-buffered), and the final one
// (default; run 3 had w8 z -il and a 256x128x8 16x8 tile as the third and fourth square
// configs, and w4 z -il at 1024³; run 4 only w4 z -il): the old buckets against the new
// defaults (null: the bucketed choice), and the other layouts.
const set = arg('--set') ?? 'final';
const FINAL: Variant[] = [
  ['old 128x128x16', HUGE],
  ['new default', null],
  ['128x128x16 w4 z -il', { ...HUGE, warpCols: 4, swizzleA: true, interleave: false }],
  ['128x128x16 w8 z -il', { ...HUGE, warpCols: 8, swizzleA: true, interleave: false }],
  ['128x128x16 w4 z', { ...HUGE, warpCols: 4, swizzleA: true }],
];
const SQUARE: Variant[] =
  set === 'final'
    ? FINAL
    : set === '1'
      ? [...knobs('128x128x16', HUGE), ['128x128x8 w8 z', { ...HUGE, tileK: 8, warpCols: 8, swizzleA: true }]]
      : [
          ['128x128x16', HUGE],
          ['128x128x16 w8 z', { ...HUGE, warpCols: 8, swizzleA: true }],
          ['128x128x16 w4 z', { ...HUGE, warpCols: 4, swizzleA: true }],
          ['128x128x16 w8 z -il', { ...HUGE, warpCols: 8, swizzleA: true, interleave: false }],
          ['128x128x16 w4 z -il', { ...HUGE, warpCols: 4, swizzleA: true, interleave: false }],
          ['128x256x8 8x16 w8 z', { ...HUGE, tileN: 256, tileK: 8, threadN: 16, warpCols: 8, swizzleA: true }],
          ['256x128x8 16x8 w4 z', { ...HUGE, tileM: 256, tileK: 8, threadM: 16, warpCols: 4, swizzleA: true }],
          ['256x128x8 16x8 w8 z', { ...HUGE, tileM: 256, tileK: 8, threadM: 16, warpCols: 8, swizzleA: true }],
          // Smaller register tiles: more threads resident, more workgroup reads per multiply-add.
          ['128x128x16 8x4 w4 z', { ...HUGE, threadN: 4, warpCols: 4, swizzleA: true }],
          ['128x64x16 8x4 w4 z', { ...LARGE, warpCols: 4, swizzleA: true }],
        ];
const midSet: Variant[] =
  set === 'final'
    ? [
        ['old 32x32x32', MID],
        ['new default', null],
      ]
    : knobs('32x32x32', MID);
/** [label, m, k, n, A transposed, B transposed, variants] */
type Shape = [string, number, number, number, boolean, boolean, Variant[]];
const shapes: Shape[] = [
  // A smoke test for a software adapter (one workgroup of the 128x128 tiles).
  ...(only.has('128') ? ([['128³', 128, 128, 128, false, false, SQUARE]] as Shape[]) : []),
  ...(only.has('1024')
    ? ([
        [
          '1024³',
          1024,
          1024,
          1024,
          false,
          false,
          set === 'final'
            ? [
                ['old 128x64x16', LARGE],
                ['new default', null],
                ['128x64x16 w4 z', { ...LARGE, warpCols: 4, swizzleA: true }],
              ]
            : [...knobs('128x64x16', LARGE), ['128x128x16 w8 z', { ...HUGE, warpCols: 8, swizzleA: true }]],
        ],
      ] as Shape[])
    : []),
  ...[2048, 4096].filter((s) => only.has(String(s))).map((s): Shape => [`${s}³`, s, s, s, false, false, SQUARE]),
  ...(only.has('mlp')
    ? ([
        ['256³', 256, 256, 256, false, false, midSet.slice(0, 4)],
        ['512³', 512, 512, 512, false, false, midSet.slice(0, 4)],
        ['256x784x512', 256, 784, 512, false, false, midSet],
        ['784x256x512 Aᵀ', 784, 256, 512, true, false, midSet],
        ['256x512x784 Bᵀ', 256, 512, 784, false, true, midSet],
      ] as Shape[])
    : []),
];

function operands(b: WebGPUBackend, m: number, k: number, n: number, at: boolean, bt: boolean, seed: number) {
  const ha = randomArray('uniform', m * k, seed, -1, 1),
    hb = randomArray('uniform', k * n, seed + 1, -1, 1);
  // Stored transposed when at/bt (then permuted back to the logical [m,k] / [k,n] views).
  const store = (h: Float32Array, r: number, c: number, t: boolean) => {
    if (!t) return NDArray.fromData(b, h, [r, c]);
    const s = new Float32Array(r * c);
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) s[j * r + i] = h[i * c + j];
    return NDArray.fromData(b, s, [c, r]).permute([1, 0]);
  };
  return { ha, hb, x: store(ha, m, k, at), y: store(hb, k, n, bt) };
}

/** Relative L2 error of 256 sampled outputs against float64 sums, and the count of non-finite outputs. */
async function check(b: WebGPUBackend, m: number, k: number, n: number, at: boolean, bt: boolean, seed: number) {
  const { ha, hb, x, y } = operands(b, m, k, n, at, bt, seed);
  const z = x.matmul(y);
  const out = (await z.data()) as Float32Array;
  let num = 0,
    den = 0,
    bad = 0;
  for (let i = 0; i < 256; i++) {
    const r = (i * 7919) % m,
      c = (i * 104729) % n;
    let s = 0;
    for (let j = 0; j < k; j++) s += ha[r * k + j] * hb[j * n + c];
    num += (out[r * n + c] - s) ** 2;
    den += s * s;
  }
  for (const v of out) if (!Number.isFinite(v)) bad++;
  for (const t of [x, y, z]) t.dispose();
  return { err: Math.sqrt(num / den), bad };
}

async function main(): Promise<void> {
  const b = await createWebGPUBackend();
  console.log(`adapter: ${b.description}`);
  const table: string[] = [];
  const json: unknown[] = [];
  let failed = 0;
  for (const [label, m, k, n, at, bt, variants] of shapes) {
    const chosen = (c: MatmulConfig | null) => () => c ?? bucketedMatmulConfig(m, n, k, 1);
    let seed = 11;
    for (const [name, cfg] of variants) {
      b.setMatmulConfig(chosen(cfg));
      const { err, bad } = await check(b, m, k, n, at, bt, (seed += 2));
      const ok = err < 1e-5 && bad === 0;
      if (!ok) failed++;
      console.log(`check ${label} ${name}: err ${err.toExponential(1)} nonfinite ${bad} ${ok ? 'ok' : 'FAIL'}`);
    }
    // Timing operands, shared by every variant: one set, or with --rotate as many copies as
    // the bench cycles through (past 128 MiB, at most 16) so the operands are not L2-resident.
    const copies = rotate ? Math.max(1, Math.min(16, Math.ceil((128 << 20) / (4 * (m * k + k * n))))) : 1;
    const sets = Array.from({ length: copies }, (_, c) => operands(b, m, k, n, at, bt, 7 + 2 * c));
    let next = 0;
    const op = () => {
      const { x, y } = sets[next++ % copies];
      x.matmul(y).dispose();
    };
    const reps: number[] = [];
    for (const [, cfg] of variants) {
      b.setMatmulConfig(chosen(cfg));
      let r = 1;
      for (;;) {
        const t0 = performance.now();
        for (let i = 0; i < r; i++) op();
        await b.sync();
        if (performance.now() - t0 > batchMs || r >= 4096) break;
        r *= 2;
      }
      reps.push(r);
    }
    // Keep the GPU busy 200 ms before the rounds (clocks up), then interleave: each round runs
    // every variant once, starting at a different one.
    for (const t0 = performance.now(); performance.now() - t0 < 200;) {
      op();
      await b.sync();
    }
    const ms: number[][] = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < variants.length; j++) {
        const v = (j + r) % variants.length;
        b.setMatmulConfig(chosen(variants[v][1]));
        const t0 = performance.now();
        for (let i = 0; i < reps[v]; i++) op();
        await b.sync();
        ms[v].push((performance.now() - t0) / reps[v]);
      }
    }
    for (const { x, y } of sets) {
      x.dispose();
      y.dispose();
    }
    variants.forEach(([name], v) => {
      const s = [...ms[v]].sort((p, q) => p - q);
      const tf = (t: number) => (2 * m * n * k) / t / 1e9;
      const med = s[s.length >> 1];
      table.push(
        `${label.padEnd(16)} | ${name.padEnd(18)} | ${tf(med).toFixed(2).padStart(6)} TFLOP/s | range ${tf(s[s.length - 1]).toFixed(1)}-${tf(s[0]).toFixed(1)} | ${med.toFixed(4)} ms`,
      );
      json.push({ shape: label, variant: name, cfg: variants[v][1], msMedian: med, ms: ms[v], tflops: tf(med) });
    });
    table.push('');
    console.log(table.slice(-variants.length - 1).join('\n'));
  }
  console.log(`\n${table.join('\n')}\n${failed ? `${failed} CHECKS FAILED` : 'all checks passed'}`);
  const out = arg('--json');
  if (out) writeFileSync(out, JSON.stringify(json, null, 1));
  b.destroy();
  process.exit(failed ? 1 : 0);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
