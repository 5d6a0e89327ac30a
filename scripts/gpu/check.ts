// Correctness on a real GPU in one run: the shared op table, the gradient-check suite (WebGPU
// vs the CPU backend) and the IEEE edge cases, on whatever adapter Dawn finds. Bundled and
// shipped to the GPU host by scripts/gpu/build.sh; prints a summary and exits 1 on a failure.
import { CpuBackend, E, NDArray, randomArray } from '@surf/core';
import { opCases, runCase } from '@surf/core/testing';
import { MATMUL_CANDIDATES, MatmulConfig, WebGPUBackend, createWebGPUBackend } from '@surf/webgpu';
import { runGradcheckSuite, setBackend } from '@surf/autograd';
import { runIeeeCases } from '../../test-support/ieee-cases';

async function main(): Promise<void> {
  const gpu = await createWebGPUBackend();
  console.log(`adapter: ${gpu.description}`);
  let failed = 0;
  const cases = opCases();
  for (const c of cases) {
    const r = await runCase(c, gpu);
    if (!r.ok) {
      failed++;
      console.log(`FAIL op ${c.name}: ${r.message}`);
    }
  }
  console.log(`op table: ${cases.length - failed}/${cases.length} passed`);
  const cpu = new CpuBackend();
  const g = await runGradcheckSuite({ backend: gpu, reference: cpu });
  const gf = g.filter((r) => !r.ok);
  gf.forEach((r) => console.log(`FAIL gradcheck ${r.name}: ${r.detail}`));
  console.log(`gradcheck suite (webgpu vs cpu): ${g.length - gf.length}/${g.length} passed`);
  setBackend(gpu);
  const ie = await runIeeeCases();
  const iff = ie.filter((r) => !r.ok);
  iff.forEach((r) =>
    console.log(`FAIL ieee ${r.name}: ${r.message}; got ${JSON.stringify(r.got)}, want ${JSON.stringify(r.want)}`),
  );
  console.log(`ieee cases: ${ie.length - iff.length}/${ie.length} as documented`);
  failed += gf.length + iff.length;
  failed += await kernelVariants(gpu);
  gpu.destroy();
  console.log(failed ? `${failed} FAILED` : 'all passed');
  process.exitCode = failed ? 1 : 0;
}

/**
 * Every tuner candidate (and the knob variants) on odd sizes with transposed operands and a
 * fused bias+relu epilogue, and the reduction layouts on large inputs, against float64 sums
 * computed here: ‖got − ref‖∞ relative to the terms' magnitude must stay under 1e-5.
 */
async function kernelVariants(gpu: WebGPUBackend): Promise<number> {
  let bad = 0;
  const [m, k, n] = [333, 261, 197];
  const A = randomArray('uniform', m * k, 11, -1, 1);
  const B = randomArray('uniform', k * n, 12, -1, 1);
  const bias = randomArray('uniform', n, 13, -1, 1);
  const ref = new Float64Array(m * n);
  const mag = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      let t = 0;
      for (let q = 0; q < k; q++) {
        s += A[i * k + q] * B[q * n + j];
        t += Math.abs(A[i * k + q] * B[q * n + j]);
      }
      ref[i * n + j] = Math.max(s + bias[j], 0);
      mag[i * n + j] = t + 1;
    }
  const at = new Float32Array(k * m);
  for (let i = 0; i < m; i++) for (let q = 0; q < k; q++) at[q * m + i] = A[i * k + q];
  const variants: MatmulConfig[] = [
    ...MATMUL_CANDIDATES,
    { tileM: 128, tileN: 128, tileK: 32, threadM: 8, threadN: 8, vec4: true, vecA: false },
    { tileM: 128, tileN: 128, tileK: 32, threadM: 8, threadN: 8, vec4: true, padA: 4, interleave: true },
    { tileM: 128, tileN: 64, tileK: 32, threadM: 8, threadN: 4, vec4: true, interleave: true },
  ];
  const a = NDArray.fromData(gpu, A, [m, k]);
  const aT = NDArray.fromData(gpu, at, [k, m]).permute([1, 0]);
  const b = NDArray.fromData(gpu, B, [k, n]);
  const bb = NDArray.fromData(gpu, bias, [n]);
  for (const cfg of variants) {
    gpu.setMatmulConfig(() => cfg);
    for (const [name, x] of [
      ['a', a],
      ['aT', aT],
    ] as const) {
      const y = x.matmul(b, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bb] });
      const got = await y.data();
      y.dispose();
      let worst = 0;
      for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref[i]) / mag[i]);
      if (!(worst < 1e-5)) {
        bad++;
        console.log(`FAIL matmul ${JSON.stringify(cfg)} ${name}: worst relative error ${worst}`);
      }
    }
  }
  gpu.setMatmulConfig(undefined);
  // Reductions: full sum of 2^24 + 3 (not 4-aligned) and 2^24, row and column sums of 2048x2050.
  for (const len of [(1 << 24) + 3, 1 << 24]) {
    const X = randomArray('uniform', len, 14, -1, 1);
    let s = 0;
    let t = 0;
    for (let i = 0; i < len; i++) {
      s += X[i];
      t += Math.abs(X[i]);
    }
    const x = NDArray.fromData(gpu, X, [len]);
    const y = x.sum();
    const got = (await y.data())[0];
    y.dispose();
    x.dispose();
    if (!(Math.abs(got - s) <= 1e-5 * t)) {
      bad++;
      console.log(`FAIL sum of ${len}: ${got} vs ${s}`);
    }
  }
  const [R, Cc] = [2048, 2050];
  const X = randomArray('uniform', R * Cc, 15, -1, 1);
  const x = NDArray.fromData(gpu, X, [R, Cc]);
  for (const ax of [0, 1]) {
    const y = x.sum(ax);
    const got = await y.data();
    y.dispose();
    const outs = ax === 0 ? Cc : R;
    const len = ax === 0 ? R : Cc;
    for (let o = 0; o < outs; o++) {
      let s = 0;
      let t = 0;
      for (let r = 0; r < len; r++) {
        const v = ax === 0 ? X[r * Cc + o] : X[o * Cc + r];
        s += v;
        t += Math.abs(v);
      }
      if (!(Math.abs(got[o] - s) <= 1e-5 * t)) {
        bad++;
        console.log(`FAIL sum axis ${ax} output ${o}: ${got[o]} vs ${s}`);
        break;
      }
    }
  }
  x.dispose();
  for (const t of [a, aT, b, bb]) t.dispose();
  console.log(
    `kernel variants: ${bad ? `${bad} FAILED` : 'all passed'} (${variants.length} matmul configs x 2 layouts + epilogue, 4 reductions)`,
  );
  return bad;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
