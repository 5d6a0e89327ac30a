#!/usr/bin/env node
// Builds each package's dist/ for publishing: ESM bundles of its entry points (one esbuild run
// per package with code splitting, so `@surf/core` and `@surf/core/testing` share one copy of
// the classes; sibling @surf packages and runtime dependencies stay external), the .d.ts
// declarations from tsc with every relative specifier made explicit (`./ops/arith.js`,
// `./nn/index.js`) so they resolve under moduleResolution node16/nodenext as well as bundler,
// and the repository's LICENSE next to each package.json so the tarballs carry it.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

// Package directory -> entry points under src/ (without .ts).
const pkgs = { core: ['index', 'testing/index'], 'webgpu-backend': ['index'], autograd: ['index'], nn: ['index'] };
const external = ['@surf/*', 'webgpu', 'seedrandom', 'node:*'];
// Declarations of these packages name WebGPU's global types (GPUDevice, ...).
const needsWebGPUTypes = new Set(['webgpu-backend']);

for (const [dir, entries] of Object.entries(pkgs)) {
  rmSync(`packages/${dir}/dist`, { recursive: true, force: true });
  await build({
    entryPoints: Object.fromEntries(entries.map((e) => [e, `packages/${dir}/src/${e}.ts`])),
    outdir: `packages/${dir}/dist`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external,
    logLevel: 'warning',
    chunkNames: 'chunks/[name]-[hash]',
  });
}
rmSync('.out/types', { recursive: true, force: true });
execFileSync(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
for (const dir of Object.keys(pkgs)) {
  const dist = `packages/${dir}/dist`;
  cpSync(`.out/types/packages/${dir}/src`, dist, { recursive: true });
  for (const f of walk(dist).filter((f) => f.endsWith('.d.ts'))) {
    let text = explicitExtensions(f, readFileSync(f, 'utf8'));
    if (needsWebGPUTypes.has(dir)) text = `/// <reference types="@webgpu/types" />\n${text}`;
    writeFileSync(f, text);
  }
  copyFileSync('LICENSE', `packages/${dir}/LICENSE`);
}
console.log('built packages/*/dist');

function walk(d) {
  return readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
}

/** `from './x'` / `import('./x')` -> './x.js' or './x/index.js', whichever declaration exists. */
function explicitExtensions(file, text) {
  return text.replace(/(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*|\.\.?)\2/g, (m, pre, q, spec) => {
    if (/\.(js|mjs|cjs|json)$/.test(spec)) return m;
    const base = resolve(dirname(file), spec);
    if (existsSync(`${base}.d.ts`)) return `${pre}${q}${spec}.js${q}`;
    if (existsSync(join(base, 'index.d.ts'))) return `${pre}${q}${spec.replace(/\/$/, '')}/index.js${q}`;
    throw new Error(`build: ${file}: cannot resolve the declaration of '${spec}'`);
  });
}
