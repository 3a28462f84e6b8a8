// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Harnesses under benchmarks/ are not shipped in dist, so nothing in src/ may import them. */
const NO_BENCHMARKS = {
  group: ['**/benchmarks/**'],
  message: 'src/ never imports benchmarks/ (not part of the package).',
};

/** Import rules from docs/architecture: one-way dependencies between the folders of src/. */
const restrict = (patterns) => ({
  'no-restricted-imports': ['error', { patterns: [...patterns, NO_BENCHMARKS] }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'dist-benchmarks/**', 'node_modules/**', 'coverage/**', 'results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['src/cli.ts', 'src/cli/**/*.ts'],
    rules: restrict([
      {
        group: ['**/core/**', '**/mock/**', '**/bench/**'],
        message: 'cli.ts and cli/ import commands/* only.',
      },
    ]),
  },
  {
    files: ['src/commands/**/*.ts'],
    rules: restrict([
      {
        group: ['../core/*/**', '../core/!(index).js'],
        message: 'commands import core through core/index.js only.',
      },
    ]),
  },
  {
    files: ['src/mock/**/*.ts'],
    rules: restrict([
      {
        group: [
          '../commands/**',
          '../bench/**',
          '../core/!(protocol|errors.js)/**',
          '../core/!(protocol|errors).js',
          '../core/index.js',
        ],
        message: 'mock/ may import core/protocol and core/errors only.',
      },
    ]),
  },
  {
    files: ['src/bench/**/*.ts'],
    rules: restrict([
      {
        group: ['../core/**', '../mock/**', '../commands/**', '../cli.js'],
        message: 'bench/ takes URLs; it imports nothing else from src.',
      },
    ]),
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      ...restrict([
        {
          group: [
            '**/commands/**',
            '**/mock/**',
            '**/bench/**',
            '**/cli.js',
            'commander',
            'cli-table3',
          ],
          message: 'core/ imports nothing outside core.',
        },
      ]),
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'exit',
          message: 'core never exits the process; return errors.',
        },
      ],
    },
  },
  // Leaves inside core may not reach up the layers.
  {
    files: ['src/core/errors.ts', 'src/core/protocol/**/*.ts', 'src/core/config/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/node/**',
          '**/quota/**',
          '**/routing/**',
          '**/serving/**',
          '**/http/**',
          '**/metrics.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'core leaves (errors, protocol, config) import no higher layer.',
      },
    ]),
  },
  // chain/ knows the chain from answers: it reads protocol bytes and config, nothing above.
  {
    files: ['src/core/chain/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/node/**',
          '**/quota/**',
          '**/routing/**',
          '**/serving/**',
          '**/cache/**',
          '**/http/**',
          '**/ws/**',
          '**/metrics.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'chain/ sits above protocol and config, below node, routing and everything else.',
      },
    ]),
  },
  {
    files: [
      'src/core/node/**/*.ts',
      'src/core/quota/**/*.ts',
      'src/core/metrics.ts',
      'src/core/prom-*.ts',
    ],
    rules: restrict([
      {
        group: [
          '**/routing/**',
          '**/serving/**',
          '**/http/**',
          '**/ws/**',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'node/quota/metrics sit below routing, serving, http and ws.',
      },
    ]),
  },
  {
    // Client keys: who a caller is and what its key lets it do; the serving layer asks.
    files: ['src/core/keys/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/routing/**',
          '**/serving/**',
          '**/cache/**',
          '**/cluster/**',
          '**/http/**',
          '**/ws/**',
          '**/service*.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'keys sits above config, node and quota, below serving, http and ws.',
      },
    ]),
  },
  {
    files: ['src/core/cluster/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/http/**',
          '**/service*.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'cluster sits below http and the service.',
      },
    ]),
  },
  {
    files: ['src/core/cache/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/routing/**',
          '**/serving/**',
          '**/http/**',
          '**/ws/**',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'the cache sits below serving, which puts it in front of routing for every door.',
      },
    ]),
  },
  {
    files: ['src/core/routing/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/serving/**',
          '**/http/**',
          '**/ws/**',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'routing sits below serving, http and ws.',
      },
    ]),
  },
  {
    // The doors' shared path: cache → coalesce → route → store, for HTTP and WebSocket alike.
    files: ['src/core/serving/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/http/**',
          '**/ws/**',
          '**/service*.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'serving sits below http and ws, above routing and the cache.',
      },
    ]),
  },
  {
    files: ['src/core/http/**/*.ts'],
    rules: restrict([
      {
        group: [
          '**/ws/**',
          '**/service.js',
          '**/index.js',
          '**/commands/**',
          '**/mock/**',
          '**/bench/**',
        ],
        message: 'http sits below ws and service.',
      },
    ]),
  },
  {
    files: ['src/core/ws/**/*.ts'],
    rules: restrict([
      {
        group: ['**/service.js', '**/index.js', '**/commands/**', '**/mock/**', '**/bench/**'],
        message: 'ws sits below service.',
      },
    ]),
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);
