/** Flag parsing shared by the `cascade bench` modes: strings from commander (or env) → values. */
import path from 'node:path';
import { UsageError } from '../core/index.js';

/** The JSON-RPC body every bench sends unless told otherwise (the seed's getHealth). */
export const DEFAULT_BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';

function usage(flag: string, value: string, expected: string): UsageError {
  return new UsageError(`${flag} ${JSON.stringify(value)}: ${expected}`);
}

/** A whole number ≥ min (default 1), or `fallback` when the flag is absent or empty. */
export function wholeNumber(
  flag: string,
  value: string | undefined,
  fallback: number,
  min = 1,
): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || !Number.isSafeInteger(n)) {
    throw usage(flag, value, `expected a whole number ≥ ${min}`);
  }
  return n;
}

/** A number > 0 (≥ 0 with `allowZero`), or `fallback` when absent or empty. */
export function positiveNumber(
  flag: string,
  value: string | undefined,
  fallback: number,
  allowZero = false,
): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n) || (n === 0 && !allowZero)) {
    throw usage(flag, value, `expected a number ${allowZero ? '≥' : '>'} 0`);
  }
  return n;
}

/** An optional number > 0 (unset or empty = undefined). */
export function optionalPositive(flag: string, value: string | undefined): number | undefined {
  return value === undefined || value.trim() === '' ? undefined : positiveNumber(flag, value, 0);
}

/** An http(s) URL, or undefined when absent or empty. */
export function httpUrl(flag: string, value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw usage(flag, '<redacted>', 'expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usage(flag, url.protocol, 'expected an http:// or https:// URL');
  }
  return value.trim();
}

/** A request body: must be JSON (a JSON-RPC request or batch). */
export function jsonBody(value: string | undefined): string {
  if (value === undefined || value.trim() === '') return DEFAULT_BODY;
  try {
    JSON.parse(value);
  } catch {
    throw usage('--body', value, 'expected a JSON-RPC request in JSON');
  }
  return value;
}

/**
 * Runs `body` with an AbortSignal that SIGINT/SIGTERM abort, so a Ctrl-C stops the load and
 * still stops every process the bench started.
 */
export async function withInterrupt<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await body(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** A written file as the summary shows it: relative to cwd when inside it, else absolute. */
export function displayPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
