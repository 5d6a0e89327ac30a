import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

// scripts/packaging/check.mjs end to end: build, pack, install each package offline from its
// tarballs in a temporary app outside the repository, type-check a strict app under nodenext
// and bundler, run it in Node, bundle it for the browser. It prints what it checked; any
// failure throws with the reason.
test('the packages install from their tarballs and work in a fresh TypeScript app', () => {
  const out = execFileSync(process.execPath, ['scripts/packaging/check.mjs'], {
    cwd: resolve(__dirname, '../../..'),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  expect(out).toMatch(/moduleResolution nodenext/);
  expect(out).toMatch(/moduleResolution bundler/);
  expect(out).toMatch(/@surf\/nn installs on its own \(\+ 3 Surf tarballs\), without Dawn/);
  expect(out.trim().split('\n').pop()).toBe('packaging: ok');
}, 300_000);
