/**
 * `npm run bench` entry point: a launcher. It bundles the suite (bench/src/suite.ts) exactly
 * as the GPU host gets it, with bench/gpu-host/build.mjs (TF.js and jax-js inside, TF.js's
 * wasm binaries next to it, Surf modules that do not exist yet stubbed so their rows show
 * n/a), then runs that bundle with the same arguments. One code path here and on the host.
 * Options: see bench/src/suite.ts or `npm run bench -- --help`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

function repoRoot(): string {
  let dir = resolve(process.cwd());
  while (!existsSync(join(dir, 'bench', 'gpu-host', 'build.mjs'))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error('npm run bench: run it inside the Surf checkout (bench/gpu-host/build.mjs not found)');
    dir = up;
  }
  return dir;
}

const root = repoRoot();
const outdir = join(root, '.out', 'bench');
const built = spawnSync(
  process.execPath,
  [join(root, 'bench', 'gpu-host', 'build.mjs'), '--outdir', outdir, '--sourcemap', '--quiet'],
  { cwd: root, stdio: 'inherit' },
);
if (built.status !== 0) process.exit(built.status ?? 1);
const run = spawnSync(process.execPath, ['--enable-source-maps', join(outdir, 'main.mjs'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
