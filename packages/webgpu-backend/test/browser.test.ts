import { build } from 'esbuild';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pageReport, testBrowserGpu } from '../../../test-support/browser';

// The quick cases of the shared op table on WebGPU in headless Chromium (SwiftShader here):
// the page is bundled with esbuild for the browser, served from 127.0.0.1 and reports back.
// Without Chromium or WebGPU the test is skipped, unless CI is set.
const ROOT = resolve(__dirname, '../../..');

interface PageReport {
  adapter: string;
  results: { name: string; ok: boolean; message: string }[];
  error?: string;
}

async function bundle(): Promise<string> {
  const r = await build({
    entryPoints: [resolve(__dirname, 'browser/page.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    tsconfig: resolve(ROOT, 'tsconfig.json'),
    logLevel: 'silent',
    // Node's device code never reaches the page.
    plugins: [
      {
        name: 'no-node-gpu',
        setup(b) {
          b.onResolve({ filter: /node-gpu$/ }, (a) => ({ path: a.path, external: true }));
        },
      },
    ],
  });
  return r.outputFiles[0].text;
}

testBrowserGpu('quick op cases pass on WebGPU in headless Chromium', async () => {
  const js = await bundle();
  expect(js).not.toMatch(/dawn\.node|function nodeAdapter/);
  const html =
    '<!doctype html><meta charset="utf-8"><title>surf webgpu</title><script type="module" src="/page.js"></script>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/page.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const { report, errors: pageErrors } = await pageReport<PageReport>(`http://127.0.0.1:${port}/`, {
      webgpu: true,
      timeoutMs: 240_000,
    });
    expect(pageErrors).toEqual([]);
    if (report.error) {
      throw new Error(`page failed: ${report.error}`);
    }
    expect(report.adapter).toMatch(/^WebGPU: /);
    expect(report.results.length).toBeGreaterThan(10);
    const failed = report.results.filter((r) => !r.ok);
    expect(failed.map((f) => `${f.name}: ${f.message}`)).toEqual([]);
  } finally {
    server.close();
  }
});
