import { createRequire } from 'node:module';
import { destination, pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { UsageError } from '../core/index.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The server's logger: JSON lines on stdout (for collectors), human-readable when stdout is a
 * terminal. Level from LOG_LEVEL (default info).
 */
export function createLogger(env: NodeJS.ProcessEnv, stream?: NodeJS.WritableStream): Logger {
  const level = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(
      `LOG_LEVEL=${env.LOG_LEVEL} is not a log level`,
      `use one of ${LEVELS.join(', ')}`,
    );
  }
  const options = { level, base: { pid: process.pid } };
  if (stream) return pino(options, stream);
  if (process.stdout.isTTY) {
    // Required only for a terminal: a service's stdout is a pipe or a file, and pino-pretty's
    // 31 modules would load into every serving process for nothing.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pino(
      options,
      pretty({
        colorize: true,
        sync: true,
        ignore: 'pid,hostname',
        translateTime: 'SYS:HH:MM:ss.l',
      }),
    );
  }
  return pino(options, destination({ dest: 1, sync: true }));
}
