// Matmul lab for issue 15: standalone WGSL variants (register prefetch with double-buffered
// workgroup memory, tile shapes, split-K) timed on the GPU host against each other, so a
// scheme is proven before it goes into kernels/matmul/matmul.ts. Row-major A [M,K], B [K,N], sizes
// multiples of the tiles. Results go to docs/tuning-log.md.
// Usage on the host: node .bench/mm-lab.mjs [--sizes 1024,2048,4096] [--only 'exact name,exact name']
//   [--splitk-max 2048 (largest size split-K variants run at)] [--flags 'enable-dawn-features=disable_robustness'] [--json out.json]
//   node .bench/mm-lab.mjs --backend-check: the real backend's default matmul on tile-aligned
//   shapes (the fixed path: transposed operands, bias+relu epilogue, a broadcast batch) against
//   float64 sums of 256 sampled outputs, then exits.
import { createRequire } from 'module';
import * as path from 'path';

const req = createRequire(path.join(process.cwd(), 'x.js'));
const dir = path.dirname(req.resolve('webgpu/package.json'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const dawn = req(path.join(dir, 'dist', `${process.platform}-${process.arch}`, 'dawn.node')) as any;
Object.assign(globalThis, dawn.globals);

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const sizes = (arg('--sizes') ?? '1024,2048,4096').split(',').map(Number);

interface Variant {
  name: string;
  TM: number;
  TN: number;
  TK: number;
  RM: number;
  RN: number;
  prefetch: boolean;
  splitK: number;
  rows: boolean;
}
const V = (
  name: string,
  TM: number,
  TN: number,
  TK: number,
  RM: number,
  RN: number,
  prefetch: boolean,
  splitK = 1,
  rows = false,
): Variant => ({ name, TM, TN, TK, RM, RN, prefetch, splitK, rows });
// 'rows': the staged tiles are laid out per thread (A: one padded row per ty, B: one per tx),
// each thread takes a pointer to its row once, and every inner-loop read is a constant index
// into it: Dawn's robustness pass then clamps nothing in the inner loop (it must clamp a
// runtime index into a flat workgroup array on every read).
const variants: Variant[] = [
  V('128x128x16 8x8', 128, 128, 16, 8, 8, false),
  V('128x128x16 8x8 rows', 128, 128, 16, 8, 8, false, 1, true),
  V('128x128x16 8x8 rows pf', 128, 128, 16, 8, 8, true, 1, true),
  V('128x128x8 8x8 rows', 128, 128, 8, 8, 8, false, 1, true),
  V('128x128x32 8x8 rows', 128, 128, 32, 8, 8, false, 1, true),
  V('64x128x16 8x8', 64, 128, 16, 8, 8, false),
  V('64x128x16 8x8 rows', 64, 128, 16, 8, 8, false, 1, true),
  V('64x128x16 8x8 rows pf', 64, 128, 16, 8, 8, true, 1, true),
  V('128x64x16 8x8 rows', 128, 64, 16, 8, 8, false, 1, true),
  V('64x128x16 4x8 rows', 64, 128, 16, 4, 8, false, 1, true),
  V('128x128x16 8x8 sk2', 128, 128, 16, 8, 8, false, 2),
  V('128x128x16 8x8 rows sk2', 128, 128, 16, 8, 8, false, 2, true),
  V('128x128x16 8x8 rows sk4', 128, 128, 16, 8, 8, false, 4, true),
  V('64x128x16 8x8 rows sk2', 64, 128, 16, 8, 8, false, 2, true),
  V('64x128x16 8x8 rows sk4', 64, 128, 16, 8, 8, false, 4, true),
].filter(
  (v) =>
    !arg('--only') ||
    arg('--only')!
      .split(',')
      .some((s) => v.name === s.trim()),
);
const skOnly = (arg('--splitk-max') ?? '2048').split(',').map(Number)[0];

function wgsl(v: Variant, M: number, N: number, K: number): string {
  const { TM, TN, TK, RM, RN, prefetch, rows } = v;
  const TX = TN / RN,
    TY = TM / RM,
    NT = TX * TY;
  const KS = K / v.splitK; // k range per slice
  const aUnits = (TM * TK) / 4,
    bUnits = (TK * TN) / 4;
  const aPer = aUnits / NT,
    bPer = bUnits / NT;
  const nbuf = prefetch ? 2 : 1;
  // rows: per-thread row lengths (vec4s). B's is padded to odd so the 8 lanes of a quarter-warp
  // (8 tx) read distinct banks; A's is read by one ty per quarter-warp (a broadcast).
  const aRowLen = (TK * RM) / 4,
    bRowLen = ((TK * RN) / 4) | 1;
  const L: string[] = [];
  L.push(`@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;`);
  if (rows) {
    L.push(`var<workgroup> As: array<array<vec4<f32>, ${aRowLen}>, ${nbuf * TY}>;
var<workgroup> Bs: array<array<vec4<f32>, ${bRowLen}>, ${nbuf * TX}>;`);
  } else {
    L.push(`var<workgroup> As: array<vec4<f32>, ${(nbuf * TM * TK) / 4}>;
var<workgroup> Bs: array<vec4<f32>, ${(nbuf * TK * TN) / 4}>;`);
  }
  const loadRegs: string[] = [];
  const storeRegs = (buf: string): string[] => {
    const s: string[] = [];
    for (let j = 0; j < aPer; j++) {
      s.push(`{ let e = lid + ${j * NT}u; let row = e / ${TK / 4}u; let kq = (e % ${TK / 4}u) * 4u;`);
      for (let q = 0; q < 4; q++) {
        if (rows)
          s.push(
            `  { let ai = (kq + ${q}u) * ${RM}u + row % ${RM}u; As[${buf} * ${TY}u + row / ${RM}u][ai / 4u][ai % 4u] = ra${j}[${q}]; }`,
          );
        else
          s.push(
            `  { let ai = ${buf} * ${TM * TK}u + (kq + ${q}u) * ${TM}u + row; As[ai / 4u][ai % 4u] = ra${j}[${q}]; }`,
          );
      }
      s.push('}');
    }
    for (let j = 0; j < bPer; j++) {
      if (rows)
        s.push(
          `{ let e = lid + ${j * NT}u; let kk = e / ${TN / 4}u; let c4 = e % ${TN / 4}u; Bs[${buf} * ${TX}u + c4 % ${TX}u][kk * ${RN / 4}u + c4 / ${TX}u] = rb${j}; }`,
        );
      else s.push(`{ let e = lid + ${j * NT}u; Bs[${buf} * ${bUnits}u + e] = rb${j}; }`);
    }
    return s;
  };
  for (let j = 0; j < aPer; j++)
    loadRegs.push(
      `{ let e = lid + ${j * NT}u; let row = e / ${TK / 4}u; let kq = (e % ${TK / 4}u) * 4u; ra${j} = A[((tileRow + row) * ${K}u + k0 + kq) / 4u]; }`,
    );
  for (let j = 0; j < bPer; j++)
    loadRegs.push(
      `{ let e = lid + ${j * NT}u; let kk = e / ${TN / 4}u; let c4 = e % ${TN / 4}u; rb${j} = B[((k0 + kk) * ${N}u + tileCol) / 4u + c4]; }`,
    );
  const compute = (buf: string | number): string[] => {
    const s: string[] = [];
    for (let kk = 0; kk < TK; kk++) {
      s.push('{');
      for (let g = 0; g < RM / 4; g++)
        s.push(
          rows
            ? `let a4_${g} = (*pa${buf})[${kk * (RM / 4) + g}];`
            : `let a4_${g} = As[(${buf} * ${TM * TK}u + ${kk * TM}u) / 4u + ty * ${RM / 4}u + ${g}u];`,
        );
      for (let q = 0; q < RN / 4; q++)
        s.push(
          rows
            ? `let b${q} = (*pb${buf})[${kk * (RN / 4) + q}];`
            : `let b${q} = Bs[${buf} * ${bUnits}u + ${(kk * TN) / 4}u + ${q * TX}u + tx];`,
        );
      for (let i = 0; i < RM; i++)
        for (let q = 0; q < RN / 4; q++)
          s.push(`acc${i}_${q} = fma(vec4<f32>(a4_${i >> 2}[${i & 3}]), b${q}, acc${i}_${q});`);
      s.push('}');
    }
    return s;
  };
  const decl: string[] = [];
  for (let i = 0; i < RM; i++) for (let q = 0; q < RN / 4; q++) decl.push(`var acc${i}_${q} = vec4<f32>(0.0);`);
  for (let j = 0; j < aPer; j++) decl.push(`var ra${j}: vec4<f32>;`);
  for (let j = 0; j < bPer; j++) decl.push(`var rb${j}: vec4<f32>;`);
  if (rows)
    for (let b = 0; b < nbuf; b++) decl.push(`let pa${b} = &As[${b * TY}u + ty]; let pb${b} = &Bs[${b * TX}u + tx];`);
  const store: string[] = [];
  const cBase = v.splitK > 1 ? `wid.z * ${(M * N) / 4}u + ` : '';
  for (let i = 0; i < RM; i++)
    for (let q = 0; q < RN / 4; q++)
      store.push(
        `C[${cBase}((tileRow + ty * ${RM}u + ${i}u) * ${N}u + tileCol) / 4u + ${q * TX}u + tx] = acc${i}_${q};`,
      );
  const kStart = `wid.z * ${KS}u`;
  const steps = KS / TK;
  let body: string;
  if (prefetch && rows) {
    // Static double buffer: two k-steps per iteration, buffer 0 then 1, so each read names its
    // buffer's pointer at compile time (one barrier per k-step).
    body = `var k0 = ${kStart};
  ${loadRegs.join('\n  ')}
  ${storeRegs('0u').join('\n  ')}
  workgroupBarrier();
  for (var t = 0u; t < ${steps}u; t += 2u) {
    k0 = ${kStart} + (t + 1u) * ${TK}u;
    ${loadRegs.join('\n    ')}
    ${compute(0).join('\n    ')}
    ${storeRegs('1u').join('\n    ')}
    workgroupBarrier();
    let more = t + 2u < ${steps}u;
    if (more) { k0 = ${kStart} + (t + 2u) * ${TK}u;
      ${loadRegs.join('\n      ')}
    }
    ${compute(1).join('\n    ')}
    if (more) {
      ${storeRegs('0u').join('\n      ')}
    }
    workgroupBarrier();
  }`;
  } else if (prefetch) {
    body = `var k0 = ${kStart};
  ${loadRegs.join('\n  ')}
  ${storeRegs('0u').join('\n  ')}
  workgroupBarrier();
  var cur = 0u;
  for (var t = 0u; t < ${steps}u; t++) {
    let more = t + 1u < ${steps}u;
    if (more) { k0 = ${kStart} + (t + 1u) * ${TK}u;
      ${loadRegs.join('\n      ')}
    }
    ${compute('cur').join('\n    ')}
    if (more) {
      ${storeRegs('(1u - cur)').join('\n      ')}
    }
    workgroupBarrier();
    cur = 1u - cur;
  }`;
  } else {
    body = `for (var k0 = ${kStart}; k0 < ${kStart} + ${KS}u; k0 += ${TK}u) {
    ${loadRegs.join('\n    ')}
    ${storeRegs('0u').join('\n    ')}
    workgroupBarrier();
    ${compute(0).join('\n    ')}
    workgroupBarrier();
  }`;
  }
  L.push(`@compute @workgroup_size(${NT})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let tileCol = wid.x * ${TN}u;
  let tileRow = wid.y * ${TM}u;
  let tx = lid % ${TX}u;
  let ty = lid / ${TX}u;
  ${decl.join('\n  ')}
  ${body}
  ${store.join('\n  ')}
}`);
  return L.join('\n');
}

/** Sums split-K partials P[s][M*N/4] into C. */
function sumWgsl(S: number, n4: number): string {
  return `@group(0) @binding(0) var<storage, read> P: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> C: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= ${n4}u) { return; }
  var s = P[i];
  ${Array.from({ length: S - 1 }, (_, j) => `s += P[i + ${(j + 1) * n4}u];`).join('\n  ')}
  C[i] = s;
}`;
}

function rand(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2 ** 31 - 1;
  }
  return a;
}

/** The backend's aligned fast path on the GPU (see the usage line); returns the number of failures. */
async function backendCheck(): Promise<number> {
  const { E, NDArray } = await import('@surf/core');
  const { createWebGPUBackend } = await import('@surf/webgpu');
  const b = await createWebGPUBackend();
  let bad = 0;
  // [batch, m, k, n]: the 1024² and 2048² buckets, a deep k, an odd k-step count (k = 1040: 65 steps of 16).
  for (const [bt, m, k, n] of [
    [1, 1024, 1024, 1024],
    [1, 2048, 512, 2048],
    [2, 1024, 1040, 1024],
    [1, 2048, 2048, 2048],
  ]) {
    const ha = rand(bt * m * k, 3),
      hb = rand(k * n, 4),
      hbias = rand(n, 5);
    for (const [ta, tb] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ]) {
      // Stored transposed when ta/tb: A as [bt, k, m], B as [n, k]; the logical values are the same.
      const sa = new Float32Array(bt * m * k),
        sb = new Float32Array(k * n);
      for (let q = 0; q < bt; q++)
        for (let i = 0; i < m; i++)
          for (let j = 0; j < k; j++)
            sa[ta ? q * m * k + j * m + i : q * m * k + i * k + j] = ha[q * m * k + i * k + j];
      for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) sb[tb ? j * k + i : i * n + j] = hb[i * n + j];
      const lead = bt > 1 ? [bt] : [];
      let x = NDArray.fromData(b, sa, ta ? [...lead, k, m] : [...lead, m, k]);
      let y = NDArray.fromData(b, sb, tb ? [n, k] : [k, n]);
      if (ta) x = x.permute(bt > 1 ? [0, 2, 1] : [1, 0]);
      if (tb) y = y.permute([1, 0]);
      const bias = NDArray.fromData(b, hbias, [n]);
      const z = x.matmul(y, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bias] });
      const out = (await z.data()) as Float32Array;
      let worst = 0;
      for (let i = 0; i < 256; i++) {
        const q = i % bt,
          r = (i * 7919) % m,
          c = (i * 104729) % n;
        let s = 0,
          t = 0;
        for (let j = 0; j < k; j++) {
          const p = ha[q * m * k + r * k + j] * hb[j * n + c];
          s += p;
          t += Math.abs(p);
        }
        const got = out[q * m * n + r * n + c];
        worst = Math.max(worst, Number.isFinite(got) ? Math.abs(got - Math.max(s + hbias[c], 0)) / (t + 1) : Infinity);
      }
      const ok = worst < 1e-5;
      if (!ok) bad++;
      console.log(
        `backend check ${bt}x${m}x${k}x${n}${ta ? ' Aᵀ' : ''}${tb ? ' Bᵀ' : ''} bias+relu: worst ${worst.toExponential(1)} ${ok ? 'ok' : 'FAIL'}`,
      );
      for (const t of [x, y, bias, z]) t.dispose();
    }
  }
  b.destroy();
  return bad;
}

async function main(): Promise<void> {
  if (process.argv.includes('--backend-check')) {
    const bad = await backendCheck();
    console.log(bad ? `${bad} FAILED` : 'backend check: all passed');
    process.exit(bad ? 1 : 0);
  }
  const gpu = dawn.create(arg('--flags') ? arg('--flags')!.split(' ') : []);
  const adapter: GPUAdapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  const device: GPUDevice = await adapter.requestDevice({
    requiredLimits: {
      maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
  device.onuncapturederror = (e: GPUUncapturedErrorEvent) => console.error('GPU error:', e.error.message);
  const rows: string[] = [];
  const json: unknown[] = [];
  for (const S of sizes) {
    const M = S,
      N = S,
      K = S;
    const ha = rand(M * K, 1),
      hb = rand(K * N, 2);
    const buf = (data: Float32Array | number, usage: number) => {
      const b = device.createBuffer({ size: typeof data === 'number' ? data : data.byteLength, usage });
      if (typeof data !== 'number') device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
      return b;
    };
    const SU = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const A = buf(ha, SU),
      B = buf(hb, SU),
      C = buf(M * N * 4, SU);
    const P = buf(4 * M * N * 4, SU);
    const rd = buf(M * N * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    // Reference: 256 sampled outputs in float64.
    const samples = Array.from({ length: 256 }, (_, i) => [(i * 7919) % M, (i * 104729) % N]);
    const ref = samples.map(([r, c]) => {
      let s = 0;
      for (let k = 0; k < K; k++) s += ha[r * K + k] * hb[k * N + c];
      return s;
    });
    for (const v of variants) {
      if (
        M % v.TM ||
        N % v.TN ||
        K % (v.TK * v.splitK) ||
        (v.prefetch && v.rows && (K / v.splitK / v.TK) % 2) ||
        (v.splitK > 1 && S > skOnly)
      )
        continue;
      const t0 = performance.now();
      const mod = device.createShaderModule({ code: wgsl(v, M, N, K) });
      let pipe: GPUComputePipeline;
      try {
        pipe = await device.createComputePipelineAsync({
          layout: 'auto',
          compute: { module: mod, entryPoint: 'main' },
        });
      } catch (e) {
        rows.push(
          `${String(S).padStart(5)} | ${v.name.padEnd(24)} | SKIP ${String((e as Error).message)
            .split('\n')[0]
            .slice(0, 90)}`,
        );
        console.error(rows[rows.length - 1]);
        continue;
      }
      const bg = device.createBindGroup({
        layout: pipe.getBindGroupLayout(0),
        entries: [A, B, v.splitK > 1 ? P : C].map((b, i) => ({ binding: i, resource: { buffer: b } })),
      });
      let sumPipe: GPUComputePipeline | null = null,
        sumBg: GPUBindGroup | null = null;
      const n4 = (M * N) / 4;
      if (v.splitK > 1) {
        sumPipe = await device.createComputePipelineAsync({
          layout: 'auto',
          compute: { module: device.createShaderModule({ code: sumWgsl(v.splitK, n4) }), entryPoint: 'main' },
        });
        sumBg = device.createBindGroup({
          layout: sumPipe.getBindGroupLayout(0),
          entries: [P, C].map((b, i) => ({ binding: i, resource: { buffer: b } })),
        });
      }
      const compileMs = performance.now() - t0;
      const encodeN = (reps: number) => {
        const enc = device.createCommandEncoder();
        for (let r = 0; r < reps; r++) {
          const pass = enc.beginComputePass();
          pass.setPipeline(pipe);
          pass.setBindGroup(0, bg);
          pass.dispatchWorkgroups(N / v.TN, M / v.TM, v.splitK);
          if (sumPipe) {
            pass.setPipeline(sumPipe);
            pass.setBindGroup(0, sumBg!);
            const g = Math.ceil(n4 / 256);
            pass.dispatchWorkgroups(Math.min(g, 65535), Math.ceil(g / 65535));
          }
          pass.end();
        }
        device.queue.submit([enc.finish()]);
      };
      // Correctness: poison C, run once, read back.
      device.queue.writeBuffer(C, 0, new Float32Array(M * N).fill(NaN));
      encodeN(1);
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(C, 0, rd, 0, M * N * 4);
      device.queue.submit([enc.finish()]);
      await rd.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(rd.getMappedRange().slice(0));
      rd.unmap();
      let num = 0,
        den = 0,
        nan = 0;
      samples.forEach(([r, c], i) => {
        const d = out[r * N + c] - ref[i];
        if (!Number.isFinite(out[r * N + c])) nan++;
        num += d * d;
        den += ref[i] * ref[i];
      });
      for (let i = 0; i < M * N; i += 997) if (!Number.isFinite(out[i])) nan++;
      const err = Math.sqrt(num / den);
      // Timing: warm up 200 ms, then 5 rounds of ~100 ms, median.
      let reps = 1;
      for (const tw = performance.now(); performance.now() - tw < 200;) {
        const t1 = performance.now();
        encodeN(reps);
        await device.queue.onSubmittedWorkDone();
        if (performance.now() - t1 < 20 && reps < 4096) reps *= 2;
      }
      const rounds: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t1 = performance.now();
        encodeN(reps);
        await device.queue.onSubmittedWorkDone();
        rounds.push((performance.now() - t1) / reps);
      }
      const ms = rounds.sort((x, y) => x - y)[2];
      const tf = (2 * M * N * K) / (ms * 1e-3) / 1e12;
      const bad = err > 1e-5 || nan > 0 ? ` BAD(err ${err.toExponential(1)}, nonfinite ${nan})` : '';
      rows.push(
        `${String(S).padStart(5)} | ${v.name.padEnd(24)} | ${tf.toFixed(1).padStart(6)} TFLOP/s | ${ms.toFixed(3).padStart(8)} ms | err ${err.toExponential(1)} | compile ${compileMs.toFixed(0)} ms${bad}`,
      );
      json.push({ size: S, variant: v.name, tflops: tf, ms, err, nonfinite: nan, spread: [rounds[0], rounds[4]] });
      console.error(rows[rows.length - 1]);
    }
    for (const b of [A, B, C, P, rd]) b.destroy();
  }
  console.log(rows.join('\n'));
  const outFile = arg('--json');
  if (outFile) (await import('fs')).writeFileSync(outFile, JSON.stringify(json, null, 1));
  device.destroy();
  process.exit(0);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
