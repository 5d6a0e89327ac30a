#!/usr/bin/env node
// The packaging check (issue 16): what a user gets from `npm install`, tried as a user would,
// outside this repository and without the network.
//  1. build (scripts/build.mjs) and `npm pack` each package; each tarball holds dist/, README.md,
//     LICENSE and package.json, and no sources or tests;
//  2. each package installs on its own with only its Surf dependencies' tarballs beside it
//     (`npm install --offline`; third-party dependencies are packed from this repository's
//     node_modules, so the check needs neither the network nor npm's metadata cache), and Dawn
//     (`webgpu`, an optional peer) is not installed;
//  3. a strict app (scripts/packaging/app/*.ts) type-checks under moduleResolution nodenext and
//     bundler, with skipLibCheck off and no `types` entries;
//  4. the app runs in Node (CPU backend) and its loss falls; without Dawn installed, asking for
//     WebGPU names the package to install and 'auto' falls back to the CPU;
//  5. a browser bundle of the API keeps the WebGPU backend, has no Node built-ins and stays under
//     BROWSER_BUDGET_KB (stated in the README).
// Usage: node scripts/packaging/check.mjs [--keep] [--no-build]
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// 406 KB on 2026-11-25 (fifth session: Winograd convs, the register-tiled attention kernels,
// the CPU backend's FMA gemm and wasm arena).
const BROWSER_BUDGET_KB = 560;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const tsc = join(root, 'node_modules/typescript/bin/tsc');
// Package directory -> its name and the Surf packages it needs installed beside it.
const PACKAGES = {
  core: { name: '@surf/core', needs: [] },
  'webgpu-backend': { name: '@surf/webgpu', needs: ['core'] },
  autograd: { name: '@surf/autograd', needs: ['core'] },
  nn: { name: '@surf/nn', needs: ['core', 'webgpu-backend', 'autograd'] },
};

/** The packed third-party dependencies of these package directories (and of their dependencies). */
function thirdPartyOf(dirs) {
  const out = new Set();
  const visit = (deps) => {
    for (const dep of Object.keys(deps ?? {})) {
      if (dep.startsWith('@surf/') || out.has(thirdParty.get(dep))) continue;
      out.add(thirdParty.get(dep));
      visit(JSON.parse(readFileSync(join(root, 'node_modules', dep, 'package.json'), 'utf8')).dependencies);
    }
  };
  for (const d of dirs) visit(JSON.parse(readFileSync(join(root, 'packages', d, 'package.json'), 'utf8')).dependencies);
  return [...out];
}
let thirdParty;

const run = (cmd, argv, cwd, env = {}) =>
  execFileSync(cmd, argv, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
const npm = (argv, cwd) =>
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', argv, cwd, {
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  });
function fail(msg) {
  throw new Error(`packaging check: ${msg}`);
}
// Each step says how long it took since the last (wall seconds), to see where the check's time goes.
let last = Date.now();
const step = (s) => {
  console.log(`packaging: ${s} (${((Date.now() - last) / 1000).toFixed(1)} s)`);
  last = Date.now();
};

const work = mkdtempSync(join(tmpdir(), 'surf-pack-'));
try {
  if (!args.includes('--no-build')) {
    step('building packages/*/dist');
    run(process.execPath, ['scripts/build.mjs'], root);
  }

  // 1. Tarballs.
  const tarballs = {};
  for (const [dir, { name }] of Object.entries(PACKAGES)) {
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], join(root, 'packages', dir)));
    const files = info.files.map((f) => f.path);
    for (const want of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
      if (!files.includes(want)) fail(`${name}'s tarball lacks ${want}`);
    }
    const stray = files.filter((f) => /^(src|test)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')));
    if (stray.length) fail(`${name}'s tarball carries sources: ${stray.slice(0, 5).join(', ')}`);
    tarballs[dir] = join(work, info.filename);
    step(`${info.filename}: ${files.length} files, ${(info.size / 1024).toFixed(0)} KiB packed`);
  }

  // Third-party dependencies (and theirs), packed from the versions installed here.
  thirdParty = new Map();
  const addDeps = (deps) => {
    for (const dep of Object.keys(deps ?? {})) {
      if (dep.startsWith('@surf/') || thirdParty.has(dep)) continue;
      const dir = join(root, 'node_modules', dep);
      if (!existsSync(dir)) fail(`dependency ${dep} is not installed in this repository (run npm ci)`);
      const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', work, dir], work));
      thirdParty.set(dep, join(work, info.filename));
      addDeps(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies);
    }
  };
  for (const dir of Object.keys(PACKAGES))
    addDeps(JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')).dependencies);

  // 2. Each package alone, with its Surf dependencies' tarballs only.
  let full = '';
  for (const [dir, { name, needs }] of Object.entries(PACKAGES)) {
    const app = join(work, `app-${dir}`);
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: `try-${dir}`, private: true, type: 'module' }, null, 2),
    );
    try {
      npm(
        [
          'install',
          '--offline',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          ...[...needs, dir].map((d) => tarballs[d]),
          ...thirdPartyOf([...needs, dir]),
        ],
        app,
      );
    } catch (e) {
      fail(
        `${name} does not install offline from its tarball and its Surf dependencies' (${needs.map((d) => PACKAGES[d].name).join(', ') || 'none'}):\n${e.stderr ?? e.message}`,
      );
    }
    if (existsSync(join(app, 'node_modules/webgpu')))
      fail(`installing ${name} pulled in Dawn ('webgpu'); it must stay an optional peer`);
    step(`${name} installs on its own (+ ${needs.length} Surf tarball${needs.length === 1 ? '' : 's'}), without Dawn`);
    if (dir === 'nn') full = app;
  }

  // 3. Types under both resolutions, strict, libraries checked too.
  cpSync(join(root, 'scripts/packaging/app'), join(full, 'src'), { recursive: true });
  const strict = {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    target: 'es2022',
  };
  const configs = {
    nodenext: { ...strict, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' },
    bundler: { ...strict, module: 'esnext', moduleResolution: 'bundler', noEmit: true },
  };
  for (const [res, compilerOptions] of Object.entries(configs)) {
    writeFileSync(join(full, `tsconfig.${res}.json`), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
    try {
      run(process.execPath, [tsc, '-p', `tsconfig.${res}.json`], full);
    } catch (e) {
      fail(`the app does not type-check with moduleResolution ${res}:\n${e.stdout}${e.stderr}`);
    }
    step(`the strict app type-checks with moduleResolution ${res}`);
  }

  // 4. It runs in Node and learns.
  const out = run(process.execPath, ['out/app.js'], full);
  const losses = [...out.matchAll(/loss (\d+\.\d+)/g)].map((m) => Number(m[1]));
  if (losses.length !== 3 || !(losses[2] < losses[0])) fail(`the app did not train as expected:\n${out}`);
  step(`the app runs in Node: ${out.trim().split('\n').join(' | ')}`);
  // Without Dawn, asking for WebGPU in Node names the package to install; 'auto' falls back to the CPU.
  const noDawn = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as surf from '@surf/nn';
    try { await surf.init({ backend: 'webgpu' }); console.log('no error'); } catch (e) { console.log(e.message); }
    console.log('auto: ' + (await surf.init()).backend);`,
    ],
    full,
  );
  if (!/install it with 'npm install webgpu'/.test(noDawn) || !/auto: cpu/.test(noDawn))
    fail(`without the webgpu package, init() should name it and 'auto' fall back to the CPU:\n${noDawn}`);
  step("without Dawn: init({ backend: 'webgpu' }) says to 'npm install webgpu', 'auto' uses the CPU");

  // 5. A browser bundle.
  const b = await build({
    entryPoints: [join(full, 'src/browser.ts')],
    absWorkingDir: full,
    bundle: true,
    minify: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'silent',
    metafile: true,
  });
  const js = b.outputFiles[0].text;
  const nodeBuiltins = Object.values(b.metafile.inputs).flatMap((i) =>
    i.imports.filter((im) => im.path !== '<runtime>' && (im.external || /^node:/.test(im.path))).map((im) => im.path),
  );
  if (nodeBuiltins.length)
    fail(`the browser bundle imports Node built-ins or externals: ${[...new Set(nodeBuiltins)].join(', ')}`);
  if (/\brequire\(["'](fs|path|os|module|child_process)["']\)/.test(js))
    fail('the browser bundle requires a Node built-in');
  // @surf/nn registers the WebGPU backend by importing @surf/webgpu: a wrong `sideEffects` drops it.
  if (!js.includes('requestAdapter'))
    fail("the browser bundle lost the WebGPU backend (check the packages' sideEffects)");
  const kb = Buffer.byteLength(js) / 1024;
  if (kb > BROWSER_BUDGET_KB)
    fail(`the browser bundle is ${kb.toFixed(0)} KB, over the ${BROWSER_BUDGET_KB} KB budget`);
  step(`browser bundle: ${kb.toFixed(0)} KB minified (budget ${BROWSER_BUDGET_KB} KB), no Node built-ins`);
  console.log('packaging: ok');
} finally {
  if (args.includes('--keep')) console.log(`packaging: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
