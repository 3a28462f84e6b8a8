/**
 * `$VAR` / `${VAR}` substitution in node URLs. A name is the longest run of ASCII letters,
 * digits and `_` after `$`; a `$` followed by anything else (or nothing) stays literal, so
 * `$$` and a trailing `$` survive. An unset variable is an error, never an empty string: a
 * URL with a missing API key would otherwise be sent to the provider.
 */

const NAME_CHAR = /[A-Za-z0-9_]/;

/** The outcome of substituting one string. */
export interface Substitution {
  /** The string with every variable's value in place. */
  readonly value: string;
  /** The string with every variable shown as `***` (safe to print). */
  readonly masked: string;
  /** Variables referenced but not set. */
  readonly missing: readonly string[];
  /** Malformed `${…}` references. */
  readonly malformed: readonly string[];
}

function readName(text: string, from: number): number {
  let end = from;
  while (end < text.length && NAME_CHAR.test(text[end]!)) end++;
  return end;
}

/** Substitutes `$VAR` and `${VAR}` from `env`. */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv): Substitution {
  let value = '';
  let masked = '';
  const missing: string[] = [];
  const malformed: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch !== '$') {
      value += ch;
      masked += ch;
      i++;
      continue;
    }
    let name: string;
    let next: number;
    if (text[i + 1] === '{') {
      const close = text.indexOf('}', i + 2);
      const inner = close === -1 ? '' : text.slice(i + 2, close);
      if (close === -1 || inner.length === 0 || readName(inner, 0) !== inner.length) {
        // Unterminated: quote only `${NAME`, not the rest of the URL (it may hold a key).
        malformed.push(
          close === -1 ? text.slice(i, readName(text, i + 2)) : text.slice(i, close + 1),
        );
        value += ch;
        masked += ch;
        i++;
        continue;
      }
      name = inner;
      next = close + 1;
    } else {
      next = readName(text, i + 1);
      name = text.slice(i + 1, next);
      if (name.length === 0) {
        value += ch;
        masked += ch;
        i++;
        continue;
      }
    }
    const resolved = env[name];
    if (resolved === undefined) missing.push(name);
    value += resolved ?? '';
    masked += '***';
    i = next;
  }
  return { value, masked, missing, malformed };
}
