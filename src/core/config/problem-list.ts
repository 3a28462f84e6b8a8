import type { ConfigProblem } from './types.js';

/** Collects errors and warnings for one load, so validation reports everything in one pass. */
export class ProblemList {
  readonly errors: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];

  error(file: string, path: string, message: string, hint?: string): void {
    this.errors.push(hint === undefined ? { file, path, message } : { file, path, message, hint });
  }

  warn(file: string, path: string, message: string, hint?: string): void {
    this.warnings.push(
      hint === undefined ? { file, path, message } : { file, path, message, hint },
    );
  }
}
