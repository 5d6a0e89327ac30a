import { startServer } from './web/server';

/** `npm run gpt:web [-- --port N]`: serves the in-browser training page on 127.0.0.1. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let port = 8081;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else throw new Error(`unknown argument "${argv[i]}" (usage: npm run gpt:web -- [--port N])`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be an integer in 0..65535');
  const server = await startServer({ port });
  console.log(`Surf character GPT page: ${server.url}`);
  console.log('Open it in a browser with WebGPU (Chrome, Edge). Ctrl-C stops.');
  const close = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', close);
  process.on('SIGTERM', close);
}

main().catch((e: Error) => {
  console.error(`gpt:web: ${e.message}`);
  process.exit(1);
});
