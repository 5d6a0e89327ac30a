import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The boundary rule of eslint.config.js (scripts/lint/boundaries.mjs) on snippets placed, by
 * their file name, in each part of the repository: each forbidden import is reported, each
 * allowed one is not. ESLint runs in one child process (its config is ESM, jest runs CJS).
 */
const root = resolve(__dirname, '../../..');

interface Snippet {
  file: string;
  code: string;
}

function lint(snippets: Snippet[]): string[][] {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const s of JSON.parse(process.argv[1])) {
      const [r] = await eslint.lintText(s.code, { filePath: s.file });
      out.push(r.messages.map((m) => (m.ruleId ?? 'parse') + ': ' + m.message));
    }
    console.log(JSON.stringify(out));`;
  const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(snippets)], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as string[][];
}

const bad: [string, Snippet, RegExp][] = [
  [
    "a package reaching into another package's src/",
    { file: 'packages/autograd/src/probe.ts', code: "import { View } from '../../core/src/view';" },
    /reaches from packages\/autograd\/src\/ into packages\/core\/src\//,
  ],
  [
    'a lower layer importing a higher one',
    { file: 'packages/autograd/src/probe.ts', code: "import { nn } from '@surf/nn';" },
    /packages\/autograd\/src may import only @surf\/core/,
  ],
  [
    'core importing any @surf package',
    { file: 'packages/core/src/cpu/probe.ts', code: "export * from '@surf/webgpu';" },
    /may import only no @surf package/,
  ],
  [
    'a runtime source using the test kit',
    { file: 'packages/nn/src/probe.ts', code: "import { opCases } from '@surf/core/testing';" },
    /test-only entry/,
  ],
  [
    'a deep path through the package name',
    { file: 'bench/src/probe.ts', code: "import { View } from '@surf/core/src/view';" },
    /does not export '\.\/src\/view'/,
  ],
  [
    "the bench reaching into a package's src/",
    { file: 'bench/src/probe.ts', code: "import { matmulInto } from '../../packages/core/src/cpu/matmul';" },
    /reaches from bench\/ into packages\/core\/src\//,
  ],
  [
    "a dynamic import of an example's files",
    { file: 'bench/src/probe.ts', code: "export const m = () => import('../../examples/mlp/src/train');" },
    /reaches from bench\/ into examples\/mlp\//,
  ],
  [
    'a package test importing the bench',
    { file: 'packages/nn/test/probe.test.ts', code: "import { runSoak } from '../../../bench/src/soak';" },
    /reaches from packages\/nn\/test\/ into bench\//,
  ],
  [
    "a script importing a package's test file",
    { file: 'scripts/gpu/probe.ts', code: "import { x } from '../../packages/autograd/test/helpers';" },
    /reaches from scripts\/ into packages\/autograd\/test\//,
  ],
  [
    "a package test reading another package's src/",
    { file: 'packages/nn/test/probe.test.ts', code: "import { View } from '../../core/src/view';" },
    /reaches from packages\/nn\/test\/ into packages\/core\/src\//,
  ],
];

const good: [string, Snippet][] = [
  [
    'a layer importing the layers below it',
    {
      file: 'packages/nn/src/probe.ts',
      code: "import { Tensor } from '@surf/autograd';\nimport { View } from '@surf/core';\nimport './local';",
    },
  ],
  [
    'a package test reading its own src/ and test-support',
    {
      file: 'packages/core/test/probe.test.ts',
      code: "import { View } from '../src/view';\nimport { gpuOrSkip } from '../../../test-support/gpu';\nimport { opCases } from '@surf/core/testing';",
    },
  ],
  [
    'the bench using exported entries',
    {
      file: 'bench/src/probe.ts',
      code: "import { setMatmulImpl } from '@surf/core/testing';\nexport const t = () => import('@surf/example-mlp/train');",
    },
  ],
];

test('the boundary rule reports forbidden imports and passes allowed ones', () => {
  const results = lint([...bad.map((b) => b[1]), ...good.map((g) => g[1])]);
  bad.forEach(([what, , want], i) => {
    expect({ what, messages: results[i] }).toEqual({ what, messages: [expect.stringMatching(want)] });
    expect(results[i][0]).toMatch(/^surf\/boundaries: /);
  });
  good.forEach(([what], j) => {
    expect({ what, messages: results[bad.length + j] }).toEqual({ what, messages: [] });
  });
});
