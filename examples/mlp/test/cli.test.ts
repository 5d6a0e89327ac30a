import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The README's commands, run as a newcomer runs them (bundled by scripts/run-ts.mjs), in a
// shortened configuration: train, save, then --predict must report the accuracy the model
// had when it was saved.
const ROOT = resolve(__dirname, '../../..');

function mlp(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ['scripts/run-ts.mjs', 'examples/mlp/src/cli.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'surf-mlp-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('--help lists the flags; a bad flag exits 2 with a message', () => {
  const h = mlp('--help');
  expect(h.code).toBe(0);
  expect(h.out).toContain('--predict PATH');
  const bad = mlp('--epochs', 'many');
  expect(bad.code).toBe(2);
  expect(bad.out).toContain('--epochs must be a positive integer');
});

test('train, save as safetensors, and --predict reports the same test accuracy', () => {
  const file = join(dir, 'sub', 'model.safetensors');
  const t = mlp('--backend', 'cpu', '--epochs', '2', '--steps', '25', '--hidden', '32', '--out', file);
  expect(t.code).toBe(0);
  expect(t.out).toContain('backend: CPU (');
  expect(t.out).toMatch(/epoch 1\/2 {2}train loss \d\.\d{4} {2}test accuracy \d+\.\d\d%/);
  const trained = /final test accuracy (\d+\.\d\d)% after 50 steps/.exec(t.out);
  expect(trained).not.toBeNull();
  expect(Number(trained![1])).toBeGreaterThan(60);
  expect(t.out).toContain(`saved the model to ${file}`);

  // The file is plain safetensors: u64 header length, JSON header, PyTorch-style names.
  const bytes = readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  expect(header['0.weight']).toMatchObject({ dtype: 'F32', shape: [32, 784] });
  expect(header['2.weight']).toMatchObject({ dtype: 'F32', shape: [10, 32] });
  expect(header['2.bias']).toMatchObject({ dtype: 'F32', shape: [10] });
  expect(bytes.length).toBe(8 + n + 4 * (32 * 784 + 32 + 10 * 32 + 10));

  const p = mlp('--backend', 'cpu', '--predict', file);
  expect(p.code).toBe(0);
  expect(p.out).toContain('784-32-10');
  const scored = /test accuracy (\d+\.\d\d)% on 2000 test digits \((\d+\.\d\d)% when saved\)/.exec(p.out);
  expect(scored).not.toBeNull();
  expect(scored![1]).toBe(trained![1]);
  expect(scored![2]).toBe(trained![1]);
});

test('--predict on a missing file fails with its path', () => {
  const p = mlp('--backend', 'cpu', '--predict', join(dir, 'nope.safetensors'));
  expect(p.code).toBe(1);
  expect(p.out).toContain('nope.safetensors');
});
