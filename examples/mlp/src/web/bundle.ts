import type { Plugin } from 'esbuild';
import { join } from 'node:path';
import { repoRoot } from '../repo-root';

/**
 * Node-only modules the library may import (Dawn's `webgpu` package, file helpers). In the
 * browser WebGPU comes from navigator.gpu and there are no files, so they become empty
 * CommonJS modules: named imports from them resolve to undefined instead of failing the build.
 */
const NODE_ONLY = /^(webgpu|node:.*|fs|fs\/promises|path|module|url|os|child_process|worker_threads)$/;

const stubNodeOnly: Plugin = {
  name: 'stub-node-only',
  setup(b) {
    b.onResolve({ filter: NODE_ONLY }, (args) => ({ path: args.path, namespace: 'node-only-stub' }));
    // @surf/webgpu reaches Dawn only when there is no navigator.gpu and it runs in Node.
    b.onResolve({ filter: /\/node-gpu$/ }, (args) => ({ path: args.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'node-only-stub' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/** The page's two scripts: the main thread's (UI) and the training worker's (Surf, the model). */
export interface PageBundle {
  app: string;
  worker: string;
}

/** Bundles the page's scripts for the browser (once per server start; takes about a second). */
export async function bundlePage(): Promise<PageBundle> {
  const root = repoRoot();
  // Loaded at run time under a name the bundler cannot follow: esbuild runs its own binary
  // found next to its package, so it must stay in node_modules, not inside our bundle.
  const name = 'esbuild';
  const { build } = (await import(name)) as typeof import('esbuild');
  const r = await build({
    entryPoints: {
      app: join(root, 'examples/mlp/src/web/main.ts'),
      worker: join(root, 'examples/mlp/src/web/worker.ts'),
    },
    outdir: join(root, 'examples/mlp/.web-out'), // only names the outputs: write is false
    absWorkingDir: root,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    sourcemap: 'inline',
    plugins: [stubNodeOnly],
    logLevel: 'silent',
  });
  const text = (name: string) => r.outputFiles.find((f) => f.path.endsWith(`/${name}.js`))!.text;
  return { app: text('app'), worker: text('worker') };
}
