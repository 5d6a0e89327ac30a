#!/usr/bin/env node
// Runs a TypeScript entry point of this repo in Node: bundles it with esbuild (the only
// build tool we use) into .out/, keeping native and heavy packages external, then runs the
// bundle with the remaining arguments. Usage: node scripts/run-ts.mjs <entry.ts> [args...]
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { basename, resolve } from 'node:path';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args...]');
  process.exit(2);
}
const outfile = resolve('.out', basename(entry).replace(/\.ts$/, '.mjs'));
await build({
  entryPoints: [entry],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile,
  sourcemap: 'inline',
  external: ['webgpu', 'playwright-core', 'esbuild', '@tensorflow/*', '@jax-js/*'],
  // CommonJS dependencies (seedrandom) call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __surfCreateRequire } from 'module'; const require = __surfCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
const r = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...args], { stdio: 'inherit' });
process.exit(r.status ?? 1);
