// jest globalSetup: decides once, before any test file registers its tests, whether this run
// has a WebGPU adapter, and hands the answer to every worker in SURF_TEST_WEBGPU ('yes', or
// 'no: <reason>'). test-support/gpu.ts reads it to register WebGPU tests as test or test.skip,
// so without an adapter they show as skipped, never as passed. The rules are in gpu-policy.mjs:
// with CI set, a missing adapter or a preset SURF_TEST_WEBGPU other than 'yes' fails the run;
// otherwise set SURF_TEST_WEBGPU yourself to skip the probe (e.g. 'no: not wanted').
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decideWebGpu } from './gpu-policy.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function probe() {
  const outfile = join(root, '.out', 'gpu-probe.mjs');
  return build({
    entryPoints: [join(root, 'test-support', 'gpu-probe.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    external: ['webgpu'],
    tsconfig: join(root, 'tsconfig.json'),
    banner: {
      js: "import { createRequire as __surfCreateRequire } from 'module'; const require = __surfCreateRequire(import.meta.url);",
    },
    logLevel: 'silent',
  }).then(() => {
    // Dawn's adapter-probing warnings go to the child's stderr: kept unless the probe fails.
    const r = spawnSync(process.execPath, [outfile], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line);
    } catch {
      return {
        ok: false,
        reason: `the probe exited with ${r.status ?? r.signal}: ${(r.stderr ?? '').trim().slice(-500)}`,
      };
    }
  });
}

export default async function globalSetup() {
  const decided = await decideWebGpu(process.env, probe);
  process.env.SURF_TEST_WEBGPU = decided;
  if (decided !== 'yes') console.warn(`\nWebGPU tests will be skipped: ${decided.replace(/^no: /, '')}`);
}
