import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The repository root, found by walking up from the working directory. Node entry points run
 * from an esbuild bundle in .out/ and tests from ts-jest, so neither __dirname nor
 * import.meta points at the sources in both; the working directory is inside the repo in both.
 */
export function repoRoot(): string {
  let dir = resolve(process.cwd());
  for (;;) {
    if (existsSync(join(dir, 'examples', 'mlp', 'src', 'web', 'main.ts'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        `cannot find the Surf repository (examples/mlp) above ${process.cwd()}; run from inside the repository`,
      );
    dir = up;
  }
}
