// Attention lab for issue 14 (helper attn2): the row-per-thread kernels against tile configs of
// the register-tiled ones (kernels/attention/tiled.ts), in one process. Each variant is first
// checked on fresh random inputs (its output buffers' pool slots poisoned with NaN first):
// out, lse, dq, dk, dv against the row kernels on the whole tensors and against a float64
// loop on whole heads; then forward, backward and both are timed, variants interleaved round
// by round after a warm-up (medians). FLOPs as the bench counts them (bench/src/rows.ts).
// Usage on the host: node .bench/attn-lab.mjs [--set final] [--rounds 7] [--batch-ms 30] [--json out.json]
import { writeFileSync } from 'fs';
import { NDArray, attentionBackwardNd, attentionNd, randomArray } from '@surf/core';
import { WebGPUBackend, WebGPUBackendOptions, createWebGPUBackend } from '@surf/webgpu';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const rounds = Number(arg('--rounds') ?? 7);
const batchMs = Number(arg('--batch-ms') ?? 30);
const set = arg('--set') ?? 'final';

type Variant = [string, WebGPUBackendOptions['attention']];
// Runs 1 and 2 (docs/tuning-log.md "attn2 2026-11-25") compared tile shapes, loop unrolling
// and register prefetch; the losers are gone from the kernels, so only the last set remains.
const SETS: Record<string, Variant[]> = {
  // Run 3 (the confirm run) measured run 2's u4 pf default against q64/32, kv64/16, u8 and
  // f32/64 (docs/tuning-log.md); run 4: the three winners together are the default.
  final: [
    ['rows (old)', 'rows'],
    ['run 3 default: u4 q64/16 kv32/32', { unroll: 4, dq: { R: 64, T: 16 }, dkv: { R: 32, T: 32 } }],
    ['u8 q64/16 kv32/32', { unroll: 8, dq: { R: 64, T: 16 }, dkv: { R: 32, T: 32 } }],
    ['default: u8 q64/32 kv64/16', undefined],
    ['u16 q64/32 kv64/16', { unroll: 16 }],
  ],
  // 2026-11-28 (H200): the aligned path (sizes compiled in, no bounds checks, vec4 loads)
  // against the general kernels, with dK/dV's two candidate tiles (docs/tuning-log.md
  // "Attention's aligned path"). The first run's other variants (u4, forward 64/16) lost.
  fixed: [
    ['general kv 64/16', { fixed: false, dkv: { R: 64, T: 16 } }],
    ['general kv 32/32', { fixed: false }],
    ['fixed kv 64/16', { dkv: { R: 64, T: 16 } }],
    ['fixed kv 32/32 (default)', undefined],
  ],
};
const variants = SETS[set];

interface Shape {
  label: string;
  B: number;
  H: number;
  L: number;
  S: number;
  causal: boolean;
}
// --small: a smoke test of the lab itself on a software adapter.
const small = process.argv.includes('--small');
const shapes: Shape[] = small
  ? [
      { label: '2x2x96x64 causal', B: 2, H: 2, L: 96, S: 96, causal: true },
      { label: '1x2x64x64 causal', B: 1, H: 2, L: 64, S: 64, causal: true },
      { label: '1x2x80x64 full', B: 1, H: 2, L: 80, S: 80, causal: false },
    ]
  : [
      { label: '16x8x1024x64 causal', B: 16, H: 8, L: 1024, S: 1024, causal: true },
      { label: '16x8x256x64 causal', B: 16, H: 8, L: 256, S: 256, causal: true },
      { label: '4x8x1024x64 full', B: 4, H: 8, L: 1024, S: 1024, causal: false },
    ];
const E = 64;
const flops = (s: Shape) => 3.5 * 4 * s.B * s.H * s.L * s.S * E * (s.causal ? 0.5 : 1);

let seed = 100;
function inputs(b: WebGPUBackend, s: Shape) {
  const h = {
    q: randomArray('normal', s.B * s.H * s.L * E, seed++),
    k: randomArray('normal', s.B * s.H * s.S * E, seed++),
    v: randomArray('normal', s.B * s.H * s.S * E, seed++),
    g: randomArray('normal', s.B * s.H * s.L * E, seed++),
  };
  const nd = (x: Float32Array, n: number) => NDArray.fromData(b, x, [s.B, s.H, n, E]);
  return { h, q: nd(h.q, s.L), k: nd(h.k, s.S), v: nd(h.v, s.S), g: nd(h.g, s.L) };
}

/** float64 attention and its gradients on one head (index hd of B·H). */
function reference(
  h: { q: Float32Array; k: Float32Array; v: Float32Array; g: Float32Array },
  s: Shape,
  hd: number,
  scale: number,
) {
  const { L, S } = s;
  const Q = (i: number, e: number) => h.q[(hd * L + i) * E + e],
    K = (j: number, e: number) => h.k[(hd * S + j) * E + e];
  const V = (j: number, e: number) => h.v[(hd * S + j) * E + e],
    G = (i: number, e: number) => h.g[(hd * L + i) * E + e];
  const out = new Float64Array(L * E),
    lse = new Float64Array(L),
    dq = new Float64Array(L * E),
    dk = new Float64Array(S * E),
    dv = new Float64Array(S * E);
  const P = new Float64Array(S);
  for (let i = 0; i < L; i++) {
    const n = s.causal ? Math.min(S, i + 1) : S;
    let m = -Infinity;
    for (let j = 0; j < n; j++) {
      let d = 0;
      for (let e = 0; e < E; e++) d += Q(i, e) * K(j, e);
      P[j] = d * scale;
      m = Math.max(m, P[j]);
    }
    let l = 0;
    for (let j = 0; j < n; j++) {
      P[j] = Math.exp(P[j] - m);
      l += P[j];
    }
    lse[i] = m + Math.log(l);
    for (let j = 0; j < n; j++) {
      P[j] /= l;
      for (let e = 0; e < E; e++) out[i * E + e] += P[j] * V(j, e);
    }
    let D = 0;
    for (let e = 0; e < E; e++) D += G(i, e) * out[i * E + e];
    for (let j = 0; j < n; j++) {
      let dp = 0;
      for (let e = 0; e < E; e++) {
        dp += G(i, e) * V(j, e);
        dv[j * E + e] += P[j] * G(i, e);
      }
      const ds = P[j] * (dp - D) * scale;
      for (let e = 0; e < E; e++) {
        dq[i * E + e] += ds * K(j, e);
        dk[j * E + e] += ds * Q(i, e);
      }
    }
  }
  return { out, lse, dq, dk, dv };
}

/** max |a - b| / max |b|, and NaN when a has a non-finite value. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>, off = 0): number {
  let num = 0,
    den = 0;
  for (let i = 0; i < b.length; i++) {
    const x = a[off + i];
    if (!Number.isFinite(x)) return NaN;
    num = Math.max(num, Math.abs(x - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
}

function poison(b: WebGPUBackend, s: Shape): void {
  const n = s.B * s.H * Math.max(s.L, s.S) * E;
  const xs = [0, 1, 2, 3, 4, 5].map(() => NDArray.fromData(b, new Float32Array(n).fill(NaN), [n]));
  xs.push(NDArray.fromData(b, new Float32Array(s.B * s.H * s.L).fill(NaN), [s.B * s.H * s.L]));
  xs.forEach((x) => x.dispose());
}

async function run(b: WebGPUBackend, s: Shape, x: ReturnType<typeof inputs>) {
  const opts = { scale: 1 / Math.sqrt(E), causal: s.causal };
  poison(b, s);
  const f = attentionNd(x.q, x.k, x.v, opts);
  const g = attentionBackwardNd(x.q, x.k, x.v, f.out, f.lse, x.g, opts);
  const r = {
    out: await f.out.data(),
    lse: await f.lse.data(),
    dq: await g.dq.data(),
    dk: await g.dk.data(),
    dv: await g.dv.data(),
  };
  [f.out, f.lse, g.dq, g.dk, g.dv].forEach((t) => t.dispose());
  return r as Record<'out' | 'lse' | 'dq' | 'dk' | 'dv', Float32Array>;
}

async function main(): Promise<void> {
  const b = await createWebGPUBackend();
  console.log(
    `adapter: ${b.description}; subgroups ${b.device.features.has('subgroups')}, min ${b.adapter?.info?.subgroupMinSize}; workgroup bytes ${b.limits.maxComputeWorkgroupStorageSize}`,
  );
  let failed = 0;
  const table: string[] = [];
  const json: unknown[] = [];
  // Checks: the main shape and an odd non-causal one (partial tiles both ways).
  const checks: Shape[] = [
    shapes[0],
    small
      ? { label: '1x2x30x64 vs 33 full', B: 1, H: 2, L: 30, S: 33, causal: false }
      : { label: '3x5x300x64 vs 333 full', B: 3, H: 5, L: 300, S: 333, causal: false },
  ];
  for (const s of checks) {
    for (const [name, opt] of variants) {
      const x = inputs(b, s);
      b.setAttention('rows');
      const want = await run(b, s, x);
      b.setAttention(opt);
      const got = await run(b, s, x);
      const worst: string[] = [];
      let bad = false;
      for (const key of ['out', 'lse', 'dq', 'dk', 'dv'] as const) {
        const e = relErr(got[key], want[key]);
        if (!(e < 1e-4)) bad = true;
        worst.push(`${key} ${e.toExponential(1)}`);
      }
      for (const hd of [0, s.B * s.H - 1]) {
        const ref = reference(x.h, s, hd, 1 / Math.sqrt(E));
        for (const key of ['out', 'lse', 'dq', 'dk', 'dv'] as const) {
          const n = ref[key].length;
          const e = relErr(got[key], ref[key], hd * n);
          if (!(e < 1e-4)) bad = true;
          if (hd === 0) worst.push(`f64 ${key} ${e.toExponential(1)}`);
        }
      }
      [x.q, x.k, x.v, x.g].forEach((t) => t.dispose());
      if (bad) failed++;
      console.log(`check ${s.label} ${name}: vs rows ${worst.join(', ')} ${bad ? 'FAIL' : 'ok'}`);
    }
  }
  for (const s of shapes) {
    const x = inputs(b, s);
    const opts = { scale: 1 / Math.sqrt(E), causal: s.causal };
    b.setAttention('rows');
    const f0 = attentionNd(x.q, x.k, x.v, opts);
    const modes: [string, () => void][] = [
      [
        'fwd+bwd',
        () => {
          const f = attentionNd(x.q, x.k, x.v, opts);
          const g = attentionBackwardNd(x.q, x.k, x.v, f.out, f.lse, x.g, opts);
          [f.out, f.lse, g.dq, g.dk, g.dv].forEach((t) => t.dispose());
        },
      ],
      [
        'fwd',
        () => {
          const f = attentionNd(x.q, x.k, x.v, opts);
          f.out.dispose();
          f.lse.dispose();
        },
      ],
      [
        'bwd',
        () => {
          const g = attentionBackwardNd(x.q, x.k, x.v, f0.out, f0.lse, x.g, opts);
          [g.dq, g.dk, g.dv].forEach((t) => t.dispose());
        },
      ],
    ];
    const cells = variants.flatMap((_, vi) => modes.map((_m, mi) => [vi, mi] as const));
    const reps = new Map<string, number>();
    for (const [vi, mi] of cells) {
      b.setAttention(variants[vi][1]);
      let r = 1;
      for (;;) {
        const t0 = performance.now();
        for (let i = 0; i < r; i++) modes[mi][1]();
        await b.sync();
        if (performance.now() - t0 > batchMs || r >= 256) break;
        r *= 2;
      }
      reps.set(`${vi},${mi}`, r);
    }
    for (const t0 = performance.now(); performance.now() - t0 < 1000;) {
      modes[0][1]();
      await b.sync();
    }
    const ms = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      for (let c = 0; c < cells.length; c++) {
        const [vi, mi] = cells[(c + r) % cells.length];
        b.setAttention(variants[vi][1]);
        const n = reps.get(`${vi},${mi}`)!;
        const t0 = performance.now();
        for (let i = 0; i < n; i++) modes[mi][1]();
        await b.sync();
        const k = `${vi},${mi}`;
        ms.set(k, [...(ms.get(k) ?? []), (performance.now() - t0) / n]);
      }
    }
    [x.q, x.k, x.v, x.g, f0.out, f0.lse].forEach((t) => t.dispose());
    table.push(`${s.label}: ms (median of ${rounds}; range), fwd+bwd GFLOP/s as the bench counts`);
    variants.forEach(([name], vi) => {
      const med = modes.map((_m, mi) => {
        const a = [...ms.get(`${vi},${mi}`)!].sort((p, q) => p - q);
        return { med: a[a.length >> 1], lo: a[0], hi: a[a.length - 1] };
      });
      table.push(
        `  ${name.padEnd(34)} | both ${med[0].med.toFixed(3)} (${med[0].lo.toFixed(2)}-${med[0].hi.toFixed(2)}) ${Math.round(flops(s) / med[0].med / 1e6)} | fwd ${med[1].med.toFixed(3)} | bwd ${med[2].med.toFixed(3)}`,
      );
      json.push({
        shape: s.label,
        variant: name,
        opt: variants[vi][1],
        ms: Object.fromEntries(modes.map(([m], mi) => [m, ms.get(`${vi},${mi}`)])),
      });
    });
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
