import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: ['**/*.slow.test.ts', 'node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: keep the number of worker processes small so servers under test get CPU.
    maxWorkers: 2,
    // expect.poll waits for an event (a request reaching a mock, a gauge moving). Its 1 s
    // default is a wall-clock bound a busy machine can miss; a missed event still fails.
    expect: { poll: { timeout: 60_000, interval: 20 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit+integration',
          include: ['src/**/*.test.ts', 'test/integration/**/*.test.ts'],
        },
      },
      {
        // Each e2e test starts Node processes (the CLI, servers, clients): seconds on an idle
        // machine, several times that while other processes share the cores. The timeouts
        // only catch a hang; what the tests assert never depends on how long they took.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/deploy/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
