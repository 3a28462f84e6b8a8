import { unknownKeyHint } from './did-you-mean.js';
import type { ProblemList } from './problem-list.js';

/** A parsed TOML table. */
export type Table = Record<string, unknown>;

/** True for a TOML table (not an array, not a date). */
export function isTable(value: unknown): value is Table {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
  );
}

/** Describes a TOML value's type for error messages. */
export function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (isTable(value)) return 'a table';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' && !Number.isInteger(value)) return `the float ${value}`;
  if (typeof value === 'bigint') return `number ${value}`;
  return `${typeof value} ${String(value)}`;
}

/** Reads typed fields from one table, reporting wrong types and unknown keys as errors. */
export class FieldReader {
  readonly #seen = new Set<string>();

  constructor(
    private readonly table: Table,
    private readonly file: string,
    readonly prefix: string,
    private readonly problems: ProblemList,
  ) {}

  #path(key: string): string {
    return this.prefix ? `${this.prefix}.${key}` : key;
  }

  /** A string field; undefined (and an error if required) when absent or wrong. */
  string(key: string, required: boolean, hint?: string): string | undefined {
    this.#seen.add(key);
    const value = this.table[key];
    if (value === undefined) {
      if (required) this.problems.error(this.file, this.#path(key), 'is required', hint);
      return undefined;
    }
    if (typeof value !== 'string') {
      this.problems.error(
        this.file,
        this.#path(key),
        `must be a string, got ${describeType(value)}`,
        hint,
      );
      return undefined;
    }
    return value;
  }

  /** A boolean field. */
  boolean(key: string, fallback: boolean): boolean {
    this.#seen.add(key);
    const value = this.table[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.problems.error(
        this.file,
        this.#path(key),
        `must be true or false, got ${describeType(value)}`,
        'write it without quotes',
      );
      return fallback;
    }
    return value;
  }

  /**
   * An integer field within [min, max]. Returns undefined when absent (error if required) or
   * invalid; never coerces a bad value to a default.
   */
  integer(
    key: string,
    range: {
      min: number;
      max: number;
      required: boolean;
      hint?: string;
      /** Message for a whole number outside [min, max] (default "must be between …"). */
      outOfRange?: (value: number) => string;
    },
  ): number | undefined {
    this.#seen.add(key);
    const value = this.table[key];
    const path = this.#path(key);
    if (value === undefined) {
      if (range.required) this.problems.error(this.file, path, 'is required', range.hint);
      return undefined;
    }
    if (typeof value === 'bigint') {
      // Parsed as BigInt only when too large to hold exactly in a number.
      const message = `must be between ${range.min} and ${range.max}, got ${value}`;
      this.problems.error(this.file, path, message, range.hint);
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.problems.error(
        this.file,
        path,
        `must be a whole number, got ${describeType(value)}`,
        range.hint ?? 'write a number without quotes',
      );
      return undefined;
    }
    if (value < range.min || value > range.max) {
      this.problems.error(
        this.file,
        path,
        range.outOfRange?.(value) ?? `must be between ${range.min} and ${range.max}, got ${value}`,
        range.hint,
      );
      return undefined;
    }
    return value;
  }

  /** Marks a key as known without reading it (read by the caller some other way). */
  accept(key: string): void {
    this.#seen.add(key);
  }

  /** Reports every key that no read asked for. Call after all reads. */
  rejectUnknown(allowed: readonly string[]): void {
    for (const key of Object.keys(this.table)) {
      if (this.#seen.has(key)) continue;
      this.problems.error(this.file, this.#path(key), 'unknown key', unknownKeyHint(key, allowed));
    }
  }
}
