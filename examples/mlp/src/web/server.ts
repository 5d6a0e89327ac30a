import { encodeSplit } from '../data/binary';
import { loadMnist } from '../data/mnist-node';
import { bundlePage } from './bundle';
import { PAGE_HTML } from './page-html';
import { Route, RunningServer, serveRoutes } from './static-server';

export type { RunningServer };

export interface ServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  host?: string;
}

/**
 * Serves the training page: the HTML, its two scripts bundled at start (the page's and its
 * training worker's), and the digits as one binary file made from the mnist package at start
 * (7.8 MB instead of 21 MB of JSON).
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const [scripts, digits] = await Promise.all([bundlePage(), Promise.resolve(encodeSplit(loadMnist()))]);
  const routes: Record<string, Route> = {
    '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: scripts.app },
    // The training worker (a module worker started by app.js): Surf and the model run there.
    '/worker.js': { type: 'text/javascript; charset=utf-8', body: scripts.worker },
    '/mnist.bin': { type: 'application/octet-stream', body: digits },
  };
  return serveRoutes(routes, { port: opts.port, host });
}
