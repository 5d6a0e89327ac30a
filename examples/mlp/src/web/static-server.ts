import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** A fixed page asset: its content type and body. */
export interface Route {
  type: string;
  body: string | Uint8Array;
}

/**
 * Serves fixed routes (GET/HEAD; '/index.html' is '/') on `host:port` (0 picks a free port,
 * as the tests do); anything else is a 404. The examples' pages are made once at start, so
 * nothing here reads the disk.
 */
export async function serveRoutes(
  routes: Record<string, Route>,
  opts: { port: number; host?: string },
): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const route = routes[path === '/index.html' ? '/' : path];
    if (!route || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': route.type,
      'content-length': Buffer.byteLength(route.body),
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : route.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
