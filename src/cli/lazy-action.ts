/**
 * What the command declarations (src/cli.ts, src/cli/*) share. Light on purpose: everything
 * here loads for `cascade --help`, the command modules only when their command runs.
 */
import type { Command } from 'commander';
import type { CommandIo, ExitCode } from '../commands/io.js';

/** A command module's `run…(…arguments, options, io)`, resolving to an exit code. */
type Run<A extends unknown[]> = (...args: [...A, CommandIo]) => ExitCode | Promise<ExitCode>;

/**
 * A command's action: imports its module only when the command runs (never for --help), then
 * calls its run function with commander's arguments and options through runAction, which
 * turns errors into messages and exit codes. The option types come from the run functions.
 */
export function lazy<A extends unknown[]>(load: () => Promise<Run<A>>) {
  return async (...args: [...A, Command]): Promise<void> => {
    const [{ runAction }, run] = await Promise.all([import('../commands/run-action.js'), load()]);
    // commander passes the declared arguments, the options, then the Command itself.
    await runAction((io) => run(...(args.slice(0, -1) as A), io));
  };
}

/** `\nExample:` (or `Examples:`) and the command lines, indented, for addHelpText('after'). */
export const examples = (...lines: string[]): string =>
  `\nExample${lines.length > 1 ? 's' : ''}:\n  ${lines.join('\n  ')}`;
