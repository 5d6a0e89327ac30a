// StrykerJS mutation testing (`npm run mutate`), not part of `npm test`: it is far too slow for
// the suite (every mutant reruns the tests that cover it). One package folder at a time:
//
//   npm run mutate -- --mutate 'packages/nn/src/optim/**/*.ts'                    # default tests: its package's
//   SURF_MUTATE_TESTS='packages/core/test/op-table.test.ts,packages/core/test/ops-cpu.test.ts' \
//     npm run mutate -- --mutate packages/core/src/ops/scalar.ts
//
// SURF_MUTATE_TESTS (comma-separated test files) narrows the tests jest runs; otherwise the
// mutated package's own test folder runs. Only the CPU backend runs (WebGPU tests skip:
// SwiftShader would make one mutant take minutes). Reports go to reports/mutation/.
import jestConfig from './jest.config.js';

process.env.SURF_TEST_WEBGPU ??= 'no: mutation testing runs the CPU tests only';

const mutateArg = process.argv[process.argv.indexOf('--mutate') + 1] ?? '';
const pkg = /^packages\/([^/]+)\//.exec(mutateArg)?.[1];
const tests = process.env.SURF_MUTATE_TESTS?.split(',').map((t) => `<rootDir>/${t.trim()}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  mutate: ['packages/nn/src/optim/**/*.ts', 'packages/nn/src/layers/**/*.ts', 'packages/core/src/ops/**/*.ts'],
  jest: {
    projectType: 'custom',
    config: {
      ...jestConfig,
      // The default sequencer: the timing-based one reads files Stryker's sandbox does not copy.
      testSequencer: undefined,
      maxWorkers: 1,
      testMatch: tests ?? [pkg ? `<rootDir>/packages/${pkg}/test/**/*.test.ts` : '**/test/**/*.test.ts'],
    },
  },
  concurrency: 2,
  timeoutMS: 60000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  ignorePatterns: ['.out', 'reports', 'bench/results', '.wt', '.gpu-host', 'coverage'],
  tempDirName: '.stryker-tmp',
};
