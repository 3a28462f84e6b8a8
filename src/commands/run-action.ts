import { isCascadeError } from '../core/index.js';
import { processIo, type CommandIo, type ExitCode } from './io.js';

/**
 * Runs one command body and turns its outcome into an exit code: an expected CascadeError is
 * one line (plus its hint), exit 1 (2 for usage errors); anything else prints its stack.
 */
export async function runAction(
  body: (io: CommandIo) => ExitCode | Promise<ExitCode>,
  io: CommandIo = processIo,
): Promise<void> {
  try {
    process.exitCode = await body(io);
  } catch (err) {
    if (isCascadeError(err)) {
      io.err(`error: ${err.message}`);
      if (err.hint) io.err(`hint: ${err.hint}`);
      process.exitCode = err.code === 'USAGE' ? 2 : 1;
      return;
    }
    io.err(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  }
}
