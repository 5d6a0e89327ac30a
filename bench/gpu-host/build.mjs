#!/usr/bin/env node
// Bundles the benchmark suite into one self-contained ESM file for a machine without
// node_modules (the GPU host): TF.js and jax-js go inside, only Dawn (`webgpu`, restored on
// the host by .gpu-host/unpack.sh) stays external. A Surf module that does not resolve yet
// (a package still being written) becomes a stub that throws when loaded, so the suite
// still builds and its rows show n/a instead of the build failing.
//
//   node bench/gpu-host/build.mjs [--outdir .bench] [--sourcemap]
import { build } from 'esbuild';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const args = process.argv.slice(2);
const outdir = resolve(args.includes('--outdir') ? args[args.indexOf('--outdir') + 1] : '.bench');
const sourcemap = args.includes('--sourcemap');
const quiet = args.includes('--quiet');
// Another entry (debugging a piece of the suite in the same bundle setup); written as main.mjs.
const entry = args.includes('--entry') ? args[args.indexOf('--entry') + 1] : 'bench/src/suite.ts';

const stubMissing = {
  name: 'stub-missing-surf-modules',
  setup(b) {
    b.onResolve({ filter: /^(@surf\/|\.\.?\/)/ }, async (a) => {
      if (a.pluginData?.probe) return undefined;
      // Only Surf's own sources are softened; a missing third-party module is a real error.
      const surfSource = a.path.startsWith('@surf/') || /\/(packages|examples)\//.test(a.importer);
      if (!surfSource) return undefined;
      const r = await b.resolve(a.path, {
        kind: a.kind,
        resolveDir: a.resolveDir,
        importer: a.importer,
        pluginData: { probe: true },
      });
      if (r.errors.length === 0) return r;
      return { path: a.path, namespace: 'surf-missing', pluginData: { importer: a.importer } };
    });
    b.onLoad({ filter: /.*/, namespace: 'surf-missing' }, (a) => ({
      contents: `if (true) throw new Error(${JSON.stringify(`module '${a.path}' (imported by ${a.pluginData.importer}) does not exist in this checkout`)}); module.exports = {};`,
      loader: 'js',
    }));
  },
};

const result = await build({
  entryPoints: { main: entry },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir,
  outExtension: { '.js': '.mjs' },
  sourcemap: sourcemap ? 'inline' : false,
  external: ['webgpu'],
  // ESM builds first: one copy of tfjs-core (its gradients module is ESM-only).
  mainFields: ['module', 'main'],
  plugins: [stubMissing],
  // TF.js is CommonJS inside: give the ESM bundle a require(), and the __dirname that
  // tfjs-backend-wasm's Emscripten loader reads in Node.
  banner: {
    js: [
      "import { createRequire as __cr } from 'module';",
      "import { fileURLToPath as __fileURLToPath } from 'url';",
      "import { dirname as __pathDirname } from 'path';",
      'const require = __cr(import.meta.url);',
      'const __filename = __fileURLToPath(import.meta.url);',
      'const __dirname = __pathDirname(__filename);',
    ].join(' '),
  },
  logLevel: 'warning',
  metafile: true,
});
const stubs = Object.keys(result.metafile.inputs).filter((k) => k.startsWith('surf-missing:'));
for (const s of stubs) console.log(`build.mjs: stubbed (not in this checkout yet): ${s.slice('surf-missing:'.length)}`);

// TF.js's wasm backend fetches its binaries at run time: put them next to the bundle.
const req = createRequire(join(process.cwd(), 'package.json'));
let wasmDir = null;
try {
  wasmDir = join(dirname(req.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist');
} catch {
  wasmDir = 'node_modules/@tensorflow/tfjs-backend-wasm/dist';
}
const wasm = existsSync(wasmDir) ? readdirSync(wasmDir).filter((f) => /^tfjs-backend-wasm.*\.wasm$/.test(f)) : [];
for (const f of wasm) copyFileSync(join(wasmDir, f), join(outdir, f));
if (!wasm.length) console.log(`build.mjs: no TF.js wasm binaries in ${wasmDir}: its wasm rows will show n/a`);

if (!quiet) {
  const out = Object.entries(result.metafile.outputs).map(([f, o]) => `${f} (${(o.bytes / 2 ** 20).toFixed(1)} MiB)`);
  console.log(`build.mjs: wrote ${out.join(', ')} and ${wasm.length} wasm binaries`);
}
