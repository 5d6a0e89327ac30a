// Correctness on a real GPU in one run: the shared op table, the gradient-check suite (WebGPU
// vs the CPU backend) and the IEEE edge cases, on whatever adapter Dawn finds. Bundled and
// shipped to the GPU host by scripts/gpu/build.sh; prints a summary and exits 1 on a failure.
import { CpuBackend } from '@surf/core';
import { opCases, runCase } from '@surf/core/testing';
import { createWebGPUBackend } from '@surf/webgpu';
import { runGradcheckSuite, setBackend } from '@surf/autograd';
import { runIeeeCases } from '../../packages/autograd/test/reliability/ieee-cases';

async function main(): Promise<void> {
  const gpu = await createWebGPUBackend();
  console.log(`adapter: ${gpu.description}`);
  let failed = 0;
  const cases = opCases();
  for (const c of cases) {
    const r = await runCase(c, gpu);
    if (!r.ok) { failed++; console.log(`FAIL op ${c.name}: ${r.message}`); }
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
  iff.forEach((r) => console.log(`FAIL ieee ${r.name}: ${r.message}; got ${JSON.stringify(r.got)}, want ${JSON.stringify(r.want)}`));
  console.log(`ieee cases: ${ie.length - iff.length}/${ie.length} as documented`);
  failed += gf.length + iff.length;
  gpu.destroy();
  console.log(failed ? `${failed} FAILED` : 'all passed');
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
