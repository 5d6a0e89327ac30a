#!/usr/bin/env node
// Writes test-support/test-weights.json (read by test-support/sequencer.mjs) from a jest run:
//   CI=true npx jest --json --outputFile=/tmp/jest.json && node test-support/weights.mjs /tmp/jest.json [scale]
// Each file's wall seconds times `scale` (default 1): on a loaded box pass the jest process's
// (user+sys) CPU seconds over the sum of file seconds, so the numbers read as idle 2-core seconds.
// Only the order matters to the sequencer; the numbers are kept readable for people.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const [file, scale = '1'] = process.argv.slice(2);
if (!file) throw new Error('usage: node test-support/weights.mjs <jest --json output> [scale]');
const run = JSON.parse(readFileSync(file, 'utf8'));
const rows = run.testResults
  .map((r) => [
    relative(root, r.name).split('\\').join('/'),
    Math.round(((r.endTime - r.startTime) / 1000) * Number(scale) * 10) / 10,
  ])
  .sort((a, b) => b[1] - a[1]);
writeFileSync(join(here, 'test-weights.json'), `${JSON.stringify(Object.fromEntries(rows), null, 1)}\n`);
console.log(`wrote ${rows.length} weights to test-support/test-weights.json`);
