import { afterEach, beforeAll } from 'vitest';
import type { MockNode } from '../../src/mock/index.js';
import { assertBuilt, type CliProcess } from './cli-process.js';
import { makeTempDir, type TempDir } from './temp-dir.js';

/** What an e2e file registers for cleanup after each test. */
export interface E2eFixture {
  /** Spawned CLI processes (SIGKILLed if still running). */
  readonly processes: CliProcess[];
  /** In-process mock nodes (closed). */
  readonly mocks: MockNode[];
  /** A fresh temporary directory (removed). */
  tempDir(): TempDir;
}

/**
 * Installs the hooks every e2e file needs: the built CLI must exist, and whatever a test
 * started is stopped and removed after it, pass or fail.
 */
export function useE2eFixture(): E2eFixture {
  const processes: CliProcess[] = [];
  const mocks: MockNode[] = [];
  const temps: TempDir[] = [];
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop('SIGKILL')));
    await Promise.all(mocks.splice(0).map((m) => m.close()));
    for (const temp of temps.splice(0)) temp.cleanup();
  });
  return {
    processes,
    mocks,
    tempDir() {
      const temp = makeTempDir();
      temps.push(temp);
      return temp;
    },
  };
}
