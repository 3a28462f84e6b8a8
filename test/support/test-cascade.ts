/**
 * cascade as `cascade serve` runs it (startCascade, in this process), with the test method
 * registry, a metrics registry of its own, and every log line kept for the test to read.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { Config } from '../../src/core/config/types.js';
import { createPromMetrics } from '../../src/core/prom-metrics.js';
import { startCascade, type Cascade, type CascadeOptions } from '../../src/core/service.js';
import { TEST_REGISTRY } from './node-config.js';

/** What a test chooses about a cascade besides its config; the rest is the same for all. */
export type TestCascadeOptions = Omit<
  CascadeOptions,
  'config' | 'registry' | 'logger' | 'version' | 'metrics'
>;

/** A pino logger (level info) whose lines are kept, in order, in `logs`. */
export function captureLogs(): { logs: string[]; logger: Logger } {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  return { logs, logger: pino({ level: 'info' }, sink) };
}

/** Starts cascade with `config`; resolves with it and what it logs. */
export async function startTestCascade(
  config: Config,
  options: TestCascadeOptions,
): Promise<{ cascade: Cascade; logs: string[] }> {
  const { logs, logger } = captureLogs();
  const cascade = await startCascade({
    ...options,
    config,
    registry: TEST_REGISTRY,
    logger,
    version: '0.0.0-test',
    metrics: createPromMetrics({ version: '0.0.0-test' }),
  });
  return { cascade, logs };
}
