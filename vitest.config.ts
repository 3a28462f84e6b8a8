import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'benchmarks/**/*.test.ts'],
    exclude: ['**/*.slow.test.ts', 'node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two cores: keep the number of worker processes small so servers under test get CPU.
    maxWorkers: 2,
  },
});
