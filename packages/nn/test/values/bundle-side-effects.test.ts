import { buildSync } from 'esbuild';
import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';

// '@surf/nn' imports '@surf/webgpu' for its side effect (registering the backend). A bundler
// drops such an import from a file its package.json's `sideEffects` does not list: bundled from
// source (the tsconfig paths), a script using only tensor functions then had no 'webgpu'
// backend and init({ backend: 'auto' }) fell back to the CPU.

const root = resolve(__dirname, '../../../..');

test('a bundle of a script using only tensor functions keeps the WebGPU backend registration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'surf-bundle-'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(entry, "import { tensor } from '@surf/nn';\nconsole.log(tensor([1]).shape);\n");
  const out = buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    tsconfig: join(root, 'tsconfig.json'),
    external: ['webgpu', 'dawn*'],
    logLevel: 'silent',
  });
  const code = out.outputFiles[0].text;
  expect(code).toMatch(/registerBackend\("webgpu"/);
  expect(code).toMatch(/registerBackend\("cpu"/);
}, 60000);
