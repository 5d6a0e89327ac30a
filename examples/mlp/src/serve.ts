import { startServer } from './web/server';

/** `npm run mlp:web [-- --port N]`: serves the in-browser training page on 127.0.0.1. */
function parsePort(argv: string[]): number {
  let port = 8080;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log('usage: npm run mlp:web -- [--port N]   (default 8080; 0 picks a free port)');
      process.exit(0);
    }
    const v = a === '--port' ? argv[++i] : a.startsWith('--port=') ? a.slice(7) : undefined;
    if (v === undefined) throw new Error(`unknown argument "${a}" (see --help)`);
    port = Number(v);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port must be an integer in 0..65535, got "${v}"`);
  }
  return port;
}

async function main(): Promise<void> {
  const port = parsePort(process.argv.slice(2));
  const server = await startServer({ port });
  console.log(`Surf MNIST MLP page: ${server.url}`);
  console.log('Open it in a browser with WebGPU (Chrome, Edge; Safari/Firefox with WebGPU on). Ctrl-C stops.');
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e: Error) => {
  console.error(`mlp:web: ${e.message}`);
  process.exit(1);
});
