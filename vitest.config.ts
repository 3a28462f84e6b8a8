import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/*.slow.test.ts', 'node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two cores: keep the number of worker processes small so servers under test get CPU.
    maxWorkers: 2,
    // expect.poll waits for an event (a request reaching a mock, a gauge moving). Its 1 s
    // default is a wall-clock bound a busy machine can miss; a missed event still fails.
    expect: { poll: { timeout: 15_000, interval: 20 } },
  },
});
