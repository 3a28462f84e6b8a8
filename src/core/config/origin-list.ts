import type { ProblemList } from './problem-list.js';
import { describeType } from './toml-fields.js';

/** The `cors_origins` value (alone or in the list) that lets every origin in. */
export const ANY_ORIGIN = '*';

/** The example a problem of the list at `path` gives (`server.cors_origins`, `keys[0].origins`). */
function hintFor(path: string): string {
  const field = path.slice(path.lastIndexOf('.') + 1);
  return `e.g. ${field} = ["https://app.example"], or "*" for any origin`;
}

/**
 * An origin exactly as a browser sends it in `Origin`: scheme, host (lower-case) and a port
 * only when it is not the scheme's default. Anything else would never match a request.
 */
function checkOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an origin';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `has the scheme '${url.protocol}'; only http:// and https:// pages can be listed`;
  }
  if (url.origin !== text) return `is not written as browsers send it: '${url.origin}'`;
  return undefined;
}

/**
 * Reads `[server] cors_origins`: `"*"` or a list of origins (a list may hold `"*"`). Returns
 * the list (empty when absent: CORS off), or undefined after reporting a problem.
 */
export function readOriginList(
  value: unknown,
  file: string,
  problems: ProblemList,
  path = 'server.cors_origins',
): readonly string[] | undefined {
  if (value === undefined) return [];
  if (value === ANY_ORIGIN) return [ANY_ORIGIN];
  if (!Array.isArray(value)) {
    problems.error(
      file,
      path,
      `must be "*" or a list of origins, got ${describeType(value)}`,
      hintFor(path),
    );
    return undefined;
  }
  const origins: string[] = [];
  let ok = true;
  value.forEach((entry: unknown, index) => {
    const at = `${path}[${index}]`;
    if (typeof entry !== 'string') {
      problems.error(file, at, `must be a string, got ${describeType(entry)}`, hintFor(path));
      ok = false;
      return;
    }
    const problem = entry === ANY_ORIGIN ? undefined : checkOrigin(entry);
    if (problem !== undefined) {
      problems.error(
        file,
        at,
        `'${entry}' ${problem}`,
        'write scheme://host[:port] with no path or trailing slash, e.g. "https://app.example"',
      );
      ok = false;
      return;
    }
    if (!origins.includes(entry)) origins.push(entry);
  });
  return ok ? origins : undefined;
}
