// `npm run gradcheck`: runs @surf/autograd's gradient-check suite and prints a table per op
// and backend: the CPU backend against central finite differences, and WebGPU (when an adapter
// exists) against the CPU backend's gradients. Exits 1 if any check fails.
// Usage: npm run gradcheck [-- --filter <name or op>] [--cpu-only]
import { CpuBackend } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';
import { REF_ATOL, REF_RTOL, SuiteResult, runGradcheckSuite } from '@surf/autograd';

const args = process.argv.slice(2);
const fi = args.indexOf('--filter');
const filter = fi >= 0 ? args[fi + 1] : undefined;

function table(results: SuiteResult[]): void {
  const fmt = (v: number | null) => (v === null ? '-' : Number.isNaN(v) ? 'NaN' : v.toExponential(1));
  const rows = results.map((r) => [
    r.op,
    r.name,
    r.ok ? 'ok' : 'FAIL',
    fmt(r.forwardError),
    fmt(r.gradError),
    String(r.checked),
    `${r.ms}`,
  ]);
  const head = ['op', 'case', 'result', 'fwd err', 'grad err', 'elems', 'ms'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 3 ? c.padStart(w[i]) : c.padEnd(w[i]))).join('  ');
  console.log(line(head));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  rows.forEach((r) => console.log(line(r)));
  results.filter((r) => !r.ok).forEach((r) => console.log(`  FAIL ${r.name}: ${r.detail}`));
}

async function main(): Promise<void> {
  const cpu = new CpuBackend();
  let failed = 0;
  console.log(
    '\n== cpu: analytic gradients vs central finite differences (eps 1e-3, |err| <= 1e-3 + 1e-2·|numeric| unless a case says otherwise)\n',
  );
  const cpuResults = await runGradcheckSuite({ backend: cpu, filter });
  table(cpuResults);
  failed += cpuResults.filter((r) => !r.ok).length;

  if (!args.includes('--cpu-only')) {
    let gpu = null;
    try {
      gpu = await createWebGPUBackend();
    } catch (e) {
      console.log(`\n== webgpu: skipped (${(e as Error).message})`);
    }
    if (gpu) {
      console.log(
        `\n== webgpu (${gpu.description}): forward and gradients vs the cpu backend (|err| <= ${REF_ATOL} + ${REF_RTOL}·|cpu|)\n`,
      );
      const gpuResults = await runGradcheckSuite({ backend: gpu, reference: cpu, filter });
      table(gpuResults);
      failed += gpuResults.filter((r) => !r.ok).length;
      gpu.destroy();
    }
  }
  console.log(failed ? `\n${failed} check(s) FAILED` : '\nall checks passed');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
