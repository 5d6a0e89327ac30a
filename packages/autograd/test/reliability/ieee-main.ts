/**
 * The IEEE edge cases as a standalone script, for a real GPU (or a browser bundle):
 *   node scripts/run-ts.mjs packages/autograd/test/reliability/ieee-main.ts [webgpu|cpu|auto]
 * Prints one line per case and exits 1 when any case differs from the documented result.
 */
import '@surf/webgpu';
import { init } from '@surf/autograd';
import { runIeeeCases } from '../../../../test-support/ieee-cases';

async function main(): Promise<void> {
  const choice = (process.argv[2] ?? 'webgpu') as 'webgpu' | 'cpu' | 'auto';
  const info = await init({ backend: choice });
  console.log(`backend: ${info.backend} (${info.description})${info.fallbackReason ? `; ${info.fallbackReason}` : ''}`);
  const rs = await runIeeeCases();
  for (const r of rs)
    console.log(
      `${r.ok ? 'ok  ' : 'FAIL'} ${r.name}${r.ok ? '' : `\n     ${r.message}; got ${JSON.stringify(r.got)}, want ${JSON.stringify(r.want)}`}`,
    );
  const failed = rs.filter((r) => !r.ok).length;
  console.log(`${rs.length - failed}/${rs.length} cases as documented`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
