import { build } from 'esbuild';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pageReport, testBrowser } from '../../../test-support/browser';

// The CPU backend's threads in a browser: on a cross-origin-isolated page (COOP + COEP
// headers) a module Worker running Surf starts its own worker threads on the shared wasm
// memory and computes a split matmul; the page's main thread, which may not block, runs on
// one thread. Served from 127.0.0.1 to headless Chromium; no GPU involved.
const ROOT = resolve(__dirname, '../../..');

async function bundle(entry: string): Promise<string> {
  const r = await build({
    entryPoints: [resolve(__dirname, entry)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    tsconfig: resolve(ROOT, 'tsconfig.json'),
    logLevel: 'silent',
  });
  return r.outputFiles[0].text;
}

interface Report {
  error?: string;
  mainThread: { isolated: boolean; threads: number; value: number };
  worker: { error?: string; isolated: boolean; threads: number; jobs: number; maxErr: number; sqOk: boolean };
}

testBrowser(
  'a worker of a cross-origin-isolated page runs CPU kernels on threads; the main thread on one',
  async () => {
    const [page, worker] = await Promise.all([bundle('browser/threads-page.ts'), bundle('browser/threads-worker.ts')]);
    const isolation = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
    const html =
      '<!doctype html><meta charset="utf-8"><title>surf cpu threads</title><script type="module" src="/page.js"></script>';
    const server: Server = createServer((req, res) => {
      if (req.url === '/page.js') res.writeHead(200, { 'content-type': 'text/javascript', ...isolation }).end(page);
      else if (req.url === '/worker.js')
        res.writeHead(200, { 'content-type': 'text/javascript', ...isolation }).end(worker);
      else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html', ...isolation }).end(html);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const { report: r, errors } = await pageReport<Report>(`http://127.0.0.1:${port}/`, { timeoutMs: 120_000 });
      expect(errors).toEqual([]);
      expect(r.error).toBeUndefined();
      expect(r.mainThread).toEqual({ isolated: true, threads: 1, value: 256 });
      expect(r.worker.error).toBeUndefined();
      expect(r.worker.isolated).toBe(true);
      expect(r.worker.threads).toBe(2);
      expect(r.worker.jobs).toBeGreaterThan(0);
      expect(r.worker.maxErr).toBeLessThan(1e-3);
      expect(r.worker.sqOk).toBe(true);
    } finally {
      server.close();
    }
  },
);
