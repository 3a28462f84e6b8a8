/**
 * A proxy harness per test of the calling file, closed after each test together with every
 * hand-written upstream (so a test file needs no afterEach of its own).
 */
import { afterEach } from 'vitest';
import { startHarness, type Harness } from './proxy-harness.js';
import { closeUpstreams } from './upstreams.js';

/** Registers the clean-up and returns `start`, which takes startHarness's arguments. */
export function useHarness(): (...args: Parameters<typeof startHarness>) => Promise<Harness> {
  let current: Harness | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
    await closeUpstreams();
  });
  return async (...args) => {
    current = await startHarness(...args);
    return current;
  };
}
