// One jest config for every package. Sources are ESM TypeScript; ts-jest compiles them to
// CommonJS for jest (jest's ESM mode is still experimental), so no source may use import.meta.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/examples', '<rootDir>/scripts'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: { module: 'commonjs', moduleResolution: 'node', verbatimModuleSyntax: false },
        diagnostics: { warnOnly: false },
      },
    ],
  },
  moduleNameMapper: {
    '^@surf/core$': '<rootDir>/packages/core/src/index.ts',
    '^@surf/core/testing$': '<rootDir>/packages/core/src/testing/index.ts',
    '^@surf/webgpu$': '<rootDir>/packages/webgpu-backend/src/index.ts',
    '^@surf/autograd$': '<rootDir>/packages/autograd/src/index.ts',
    '^@surf/nn$': '<rootDir>/packages/nn/src/index.ts',
  },
  // Probes for a WebGPU adapter once, so WebGPU tests register as skipped when there is none.
  globalSetup: '<rootDir>/test-support/global-setup.mjs',
  testTimeout: 120000,
  // Slowest files first (test-support/sequencer.mjs), so the two workers end together.
  testSequencer: '<rootDir>/test-support/sequencer.mjs',
  maxWorkers: 2,
};
