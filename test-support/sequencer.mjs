// jest testSequencer: the slowest files start first, so two workers finish together instead of
// one idling while the other runs a long file started last. Jest's own sequencer orders by the
// durations it cached on this machine, and on a fresh checkout (CI) by file size, which puts
// small-but-slow files (the packaging check, the browser and soak tests) last. Here a file's
// weight is jest's cached duration when there is one, else its entry in test-weights.json
// (seconds on a 2-core box; regenerate with `node test-support/weights.mjs <jest --json output>`),
// else a guess from its size. Files that failed last time still go first.
import TestSequencer from '@jest/test-sequencer';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const weights = JSON.parse(readFileSync(join(here, 'test-weights.json'), 'utf8'));
const Base = TestSequencer.default ?? TestSequencer;

export default class SlowestFirst extends Base {
  sort(tests) {
    const weight = (t) => {
      const cached = this.time(t);
      if (cached != null) return cached / 1000;
      const known = weights[relative(root, t.path).split('\\').join('/')];
      // ~1 s per 2 KB of test source is the median on this suite.
      return known ?? (t.context.hasteFS.getSize(t.path) ?? 0) / 2000;
    };
    const w = new Map(tests.map((t) => [t, weight(t)]));
    return [...tests].sort((a, b) => Number(this.hasFailed(b)) - Number(this.hasFailed(a)) || w.get(b) - w.get(a));
  }
}
