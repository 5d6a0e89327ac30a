import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { encodeSplit } from '../data/binary';
import { loadMnist } from '../data/mnist-node';
import { bundlePage } from './bundle';
import { PAGE_HTML } from './page-html';

export interface ServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  host?: string;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the training page: the HTML, its two scripts bundled at start (the page's and its
 * training worker's), and the digits as one binary file made from the mnist package at start
 * (7.8 MB instead of 21 MB of JSON).
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const [scripts, digits] = await Promise.all([bundlePage(), Promise.resolve(encodeSplit(loadMnist()))]);
  const routes: Record<string, { type: string; body: string | Uint8Array }> = {
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: scripts.app },
    // The training worker (a module worker started by app.js): Surf and the model run there.
    '/worker.js': { type: 'text/javascript; charset=utf-8', body: scripts.worker },
    '/mnist.bin': { type: 'application/octet-stream', body: digits },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const route = routes[path === '/index.html' ? '/' : path];
    if (!route || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': route.type, 'content-length': Buffer.byteLength(route.body), 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : route.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
