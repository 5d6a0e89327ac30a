// ESLint runs in `npm test` for one purpose: the workspace's import boundaries
// (scripts/lint/boundaries.mjs says what they are). Type-checking stays with tsc.
import tsPlugin from '@typescript-eslint/eslint-plugin';
import tsParser from '@typescript-eslint/parser';
import boundaries from './scripts/lint/boundaries.mjs';

export default [
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.out/**',
      '.bench/**',
      '.gpu-host/**',
      '.wt/**',
      'coverage/**',
      'bench/results/**',
      // StrykerJS's sandbox and reports (npm run mutate)
      '.stryker-tmp/**',
      'reports/**',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.mjs', '**/*.js'],
    languageOptions: { parser: tsParser, ecmaVersion: 2022, sourceType: 'module' },
    // Source comments may disable rules of editors' setups (no-console, @typescript-eslint/...):
    // the plugin is loaded so those names resolve, but only our rule runs.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { surf: { rules: { boundaries } }, '@typescript-eslint': tsPlugin },
    rules: {
      'surf/boundaries': [
        'error',
        {
          // The layering, by directory under packages/: which @surf packages each src/ may import.
          // core <- webgpu-backend; core <- autograd <- nn (nn also registers the WebGPU backend).
          layers: {
            core: [],
            'webgpu-backend': ['@surf/core'],
            autograd: ['@surf/core'],
            nn: ['@surf/core', '@surf/autograd', '@surf/webgpu'],
          },
          // Entries for tests, benchmarks and tools; never part of a package's runtime.
          testOnly: ['@surf/core/testing'],
        },
      ],
    },
  },
];
