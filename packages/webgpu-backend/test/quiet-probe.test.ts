import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gpuBackend, testGpu } from '../../../test-support/gpu';

// Dawn's adapter-probing warnings (written by native code straight to stderr) must not reach
// a user's terminal: a fresh process that creates a backend prints nothing on stderr, and
// SURF_DEBUG=1 shows what the probe said.

const root = resolve(__dirname, '../../..');
const run = (env: Record<string, string | undefined>) =>
  spawnSync(process.execPath, ['scripts/run-ts.mjs', 'packages/webgpu-backend/test/fixtures/probe-main.ts'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60000,
    env: { ...process.env, VK_ICD_FILENAMES: undefined, ...env },
  });

testGpu('creating a backend in a fresh process prints nothing on stderr', async () => {
  const probe = await gpuBackend();
  probe.destroy();
  const r = run({ SURF_DEBUG: undefined });
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^adapter: WebGPU/);
  expect(r.stderr).toBe('');
});

testGpu('so does a plain ES-module bundle (no require shim), as a user app builds', async () => {
  const probe = await gpuBackend();
  probe.destroy();
  const { build } = await import('esbuild');
  mkdirSync(join(root, '.out'), { recursive: true });
  // Inside the repo (as run-ts's bundles), so the external 'webgpu' resolves.
  const outfile = join(mkdtempSync(join(root, '.out', 'probe-')), 'probe.mjs');
  await build({
    entryPoints: [join(root, 'packages/webgpu-backend/test/fixtures/probe-main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    external: ['webgpu'],
    logLevel: 'warning',
  });
  const r = spawnSync(process.execPath, [outfile], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60000,
    env: { ...process.env, VK_ICD_FILENAMES: undefined, SURF_DEBUG: undefined },
  });
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^adapter: WebGPU/);
  expect(r.stderr).toBe('');
});

test('the no-adapter advice fits the platform: no Linux install commands in a browser', async () => {
  const { installHint } = await import('@surf/webgpu');
  expect(installHint(false)).toMatch(/This browser does not expose WebGPU/);
  expect(installHint(false)).not.toMatch(/apt-get|Vulkan|npm/);
  expect(installHint(true, 'linux')).toMatch(/apt-get install chromium libvulkan1/);
  expect(installHint(true, 'darwin')).not.toMatch(/apt-get/);
});
