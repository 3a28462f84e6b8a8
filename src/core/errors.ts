/**
 * Errors cascade raises on purpose. Each carries a stable `code` (for tests and --json output)
 * and an optional `hint` that tells the operator how to fix the problem.
 */

/** Base class for every expected, user-facing error. */
export class CascadeError extends Error {
  readonly code: string;
  readonly hint: string | undefined;

  constructor(code: string, message: string, hint?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CascadeError';
    this.code = code;
    this.hint = hint;
  }
}

/** The configuration (or a price list) could not be loaded or failed validation. */
export class ConfigError extends CascadeError {
  readonly problems: readonly string[];

  constructor(message: string, problems: readonly string[] = [], hint?: string) {
    super('CONFIG_INVALID', message, hint);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The quota file exists but cannot be trusted; starting would risk overspending. */
export class QuotaFileError extends CascadeError {
  constructor(message: string, hint?: string, options?: { cause?: unknown }) {
    super('QUOTA_FILE_INVALID', message, hint, options);
    this.name = 'QuotaFileError';
  }
}

/** A flag or argument on the command line is wrong (exit code 2). */
export class UsageError extends CascadeError {
  constructor(message: string, hint?: string) {
    super('USAGE', message, hint);
    this.name = 'UsageError';
  }
}

/** The server could not start (port in use, permission denied…). */
export class StartupError extends CascadeError {
  constructor(message: string, hint?: string, options?: { cause?: unknown }) {
    super('STARTUP_FAILED', message, hint, options);
    this.name = 'StartupError';
  }
}

/** A usage reset Redis did not take: nothing changed, on any replica (this one included). */
export class ResetNotApplied extends CascadeError {
  constructor(cause: unknown) {
    super(
      'RESET_NOT_APPLIED',
      `nothing was reset: Redis did not take it (${(cause as Error).message})`,
      'run it again once Redis answers (`cascade status` shows the fleet link)',
      { cause },
    );
    this.name = 'ResetNotApplied';
  }
}

/** The answer an admin route gives when a reset failed: 503 when nothing changed. */
export function resetFailure(err: unknown): { status: number; error: string } {
  if (err instanceof ResetNotApplied) return { status: 503, error: err.message };
  return { status: 500, error: `reset applied but not saved: ${(err as Error).message}` };
}

/** True when `err` is one of cascade's own expected errors. */
export function isCascadeError(err: unknown): err is CascadeError {
  return err instanceof CascadeError;
}
