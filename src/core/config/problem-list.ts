import type { ConfigProblem } from './types.js';

/** Collects errors and warnings for one load, so validation reports everything in one pass. */
export class ProblemList {
  constructor(
    readonly errors: ConfigProblem[] = [],
    readonly warnings: ConfigProblem[] = [],
    /** Prepended to every path (`chains[1].`): a section read inside another table. */
    private readonly prefix = '',
  ) {}

  /** The same list, with `prefix.` before every path reported through it. */
  under(prefix: string): ProblemList {
    return new ProblemList(this.errors, this.warnings, `${this.prefix}${prefix}.`);
  }

  error(file: string, path: string, message: string, hint?: string): void {
    this.errors.push(this.#problem(file, path, message, hint));
  }

  warn(file: string, path: string, message: string, hint?: string): void {
    this.warnings.push(this.#problem(file, path, message, hint));
  }

  #problem(file: string, path: string, message: string, hint?: string): ConfigProblem {
    const where =
      this.prefix === '' ? path : path === '' ? this.prefix.slice(0, -1) : this.prefix + path;
    return hint === undefined
      ? { file, path: where, message }
      : { file, path: where, message, hint };
  }
}
