import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadBrown } from '../corpus-node';
import { Route, RunningServer, serveRoutes } from '@surf/example-mlp/static-server';
import { PAGE_HTML } from './page-html';

export type { RunningServer };

function repoRoot(): string {
  let dir = resolve(process.cwd());
  for (;;) {
    if (existsSync(join(dir, 'examples', 'gpt', 'src', 'web', 'main.ts'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        `cannot find the Surf repository (examples/gpt) above ${process.cwd()}; run from inside the repository`,
      );
    dir = up;
  }
}

/** Node-only modules become empty modules in the browser bundle (WebGPU is navigator.gpu there). */
const NODE_ONLY = /^(webgpu|node:.*|fs|fs\/promises|path|module|url|os|child_process|worker_threads)$/;

async function bundlePage(): Promise<string> {
  const name = 'esbuild'; // loaded at run time: esbuild must stay in node_modules, not in a bundle
  const { build } = (await import(name)) as typeof import('esbuild');
  const root = repoRoot();
  const r = await build({
    entryPoints: [join(root, 'examples/gpt/src/web/main.ts')],
    absWorkingDir: root,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
    plugins: [
      {
        name: 'stub-node-only',
        setup(b) {
          b.onResolve({ filter: NODE_ONLY }, (a) => ({ path: a.path, namespace: 'node-only-stub' }));
          b.onResolve({ filter: /\/node-gpu$/ }, (a) => ({ path: a.path, external: true }));
          b.onLoad({ filter: /.*/, namespace: 'node-only-stub' }, () => ({
            contents: 'module.exports = {};',
            loader: 'js',
          }));
        },
      },
    ],
  });
  return r.outputFiles[0].text;
}

/** Serves the page, its script (bundled at start) and the Brown corpus as prose (JSON). */
export async function startServer(opts: { port: number; host?: string }): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const script = await bundlePage();
  const corpus = JSON.stringify(loadBrown());
  const routes: Record<string, Route> = {
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: script },
    '/corpus.json': { type: 'application/json', body: corpus },
  };
  return serveRoutes(routes, { port: opts.port, host });
}
