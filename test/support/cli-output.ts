/** Reading what the CLI printed: its non-empty lines, or its stdout as a JSON object. */
import type { CliResult } from './cli-process.js';

/** The non-empty lines of `text`. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

/** The command's stdout, parsed as one JSON object. */
export function json(result: CliResult): Record<string, unknown> {
  return JSON.parse(result.stdout) as Record<string, unknown>;
}
