/**
 * The canonical form of a request's `params`, the part of the cache and coalescing key that
 * says "the same question". Whitespace goes, object members are sorted, string escapes are
 * normalised; numbers keep their exact spelling (re-parsing would round integers beyond 2^53
 * and make two different questions one), so `1.0` and `1` are different keys — a miss, never a
 * wrong answer.
 *
 * The walker validates the whole request object it is given, not just `params`: the byte scan
 * that found the method never read the rest, and a malformed request must not share a valid
 * one's answer. Anything it does not like (bad JSON, a repeated member, nesting deeper than
 * MAX_DEPTH) makes the request bypass the cache.
 */
import type { Span } from '../protocol/json-spans.js';

const MAX_DEPTH = 32;
/** Requests bigger than this bypass the cache: keys that big are not worth hashing. */
export const MAX_KEYED_REQUEST_BYTES = 16 * 1024;

class Walker {
  i: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.i = start;
  }

  space(): void {
    const b = this.bytes;
    while (this.i < this.end) {
      const c = b[this.i];
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  /** A string token, canonical (escapes normalised). */
  string(): string | undefined {
    const b = this.bytes;
    const start = this.i;
    if (b[start] !== 0x22) return undefined;
    let escaped = false;
    for (let i = start + 1; i < this.end; i++) {
      const c = b[i]!;
      if (c === 0x5c) {
        escaped = true;
        i++;
      } else if (c === 0x22) {
        this.i = i + 1;
        const raw = Buffer.from(b.buffer, b.byteOffset + start, i + 1 - start).toString('utf8');
        if (!escaped) return raw;
        try {
          return JSON.stringify(JSON.parse(raw) as string);
        } catch {
          return undefined;
        }
      } else if (c < 0x20) {
        return undefined;
      }
    }
    return undefined;
  }

  /** A number or literal token, its exact text. */
  scalar(): string | undefined {
    const b = this.bytes;
    const start = this.i;
    while (this.i < this.end) {
      const c = b[this.i]!;
      const ok =
        (c >= 0x30 && c <= 0x39) ||
        c === 0x2d ||
        c === 0x2b ||
        c === 0x2e ||
        c === 0x45 ||
        c === 0x65 ||
        (c >= 0x61 && c <= 0x7a);
      if (!ok) break;
      this.i++;
    }
    const text = Buffer.from(b.buffer, b.byteOffset + start, this.i - start).toString('latin1');
    if (text === 'true' || text === 'false' || text === 'null') return text;
    return /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? text : undefined;
  }

  value(depth: number): string | undefined {
    this.space();
    const c = this.bytes[this.i];
    if (c === 0x22) return this.string();
    if (c === 0x7b) return depth >= MAX_DEPTH ? undefined : this.object(depth + 1);
    if (c === 0x5b) return depth >= MAX_DEPTH ? undefined : this.array(depth + 1);
    return this.scalar();
  }

  array(depth: number): string | undefined {
    this.i++;
    this.space();
    if (this.bytes[this.i] === 0x5d) {
      this.i++;
      return '[]';
    }
    const parts: string[] = [];
    for (;;) {
      const item = this.value(depth);
      if (item === undefined) return undefined;
      parts.push(item);
      this.space();
      const c = this.bytes[this.i++];
      if (c === 0x5d) return `[${parts.join(',')}]`;
      if (c !== 0x2c) return undefined;
    }
  }

  /** Members as [canonical name, canonical value], in written order; undefined on a repeat. */
  members(depth: number): Array<[string, string]> | undefined {
    this.i++;
    this.space();
    const members: Array<[string, string]> = [];
    if (this.bytes[this.i] === 0x7d) {
      this.i++;
      return members;
    }
    for (;;) {
      this.space();
      const name = this.string();
      if (name === undefined) return undefined;
      this.space();
      if (this.bytes[this.i++] !== 0x3a) return undefined;
      const value = this.value(depth);
      if (value === undefined) return undefined;
      if (members.some(([seen]) => seen === name)) return undefined;
      members.push([name, value]);
      this.space();
      const c = this.bytes[this.i++];
      if (c === 0x7d) return members;
      if (c !== 0x2c) return undefined;
    }
  }

  object(depth: number): string | undefined {
    const members = this.members(depth);
    if (members === undefined) return undefined;
    members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([name, value]) => `${name}:${value}`).join(',')}}`;
  }
}

/**
 * The canonical `params` of the request object at `span` of `bytes`: '' when it has none,
 * undefined when the object is not valid JSON or too big or deep to key (bypass the cache).
 */
export function canonicalParams(bytes: Uint8Array, span: Span): string | undefined {
  if (span.end - span.start > MAX_KEYED_REQUEST_BYTES) return undefined;
  const walker = new Walker(bytes, span.start, span.end);
  walker.space();
  if (bytes[walker.i] !== 0x7b) return undefined;
  const members = walker.members(1);
  if (members === undefined) return undefined;
  walker.space();
  if (walker.i !== span.end) return undefined;
  for (const [name, value] of members) if (name === '"params"') return value;
  return '';
}
