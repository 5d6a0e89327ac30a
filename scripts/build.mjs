#!/usr/bin/env node
// Builds each package's dist/: an ESM bundle of src/index.ts (sibling @surf packages and
// runtime dependencies stay external) and its .d.ts declarations from tsc.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';

const pkgs = { core: ['index', 'testing/index'], 'webgpu-backend': ['index'], autograd: ['index'], nn: ['index'] };
const external = ['@surf/*', 'webgpu', 'seedrandom', 'node:*'];
for (const [dir, entries] of Object.entries(pkgs)) {
  rmSync(`packages/${dir}/dist`, { recursive: true, force: true });
  for (const e of entries) {
    if (!existsSync(`packages/${dir}/src/${e}.ts`)) continue;
    await build({
      entryPoints: [`packages/${dir}/src/${e}.ts`],
      outfile: `packages/${dir}/dist/${e === 'testing/index' ? 'testing' : e}.js`,
      bundle: true, format: 'esm', platform: 'neutral', target: 'es2022', external, logLevel: 'warning',
    });
  }
}
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
for (const dir of Object.keys(pkgs)) {
  cpSync(`.out/types/packages/${dir}/src`, `packages/${dir}/dist`, { recursive: true });
}
console.log('built packages/*/dist');
