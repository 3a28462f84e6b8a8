/**
 * Canonical JSON text for subscription params, so `{"commitment":"confirmed","encoding":
 * "base64"}` and the same object with its keys in another order share one upstream
 * subscription. Object keys are sorted (UTF-16 code unit order) and whitespace dropped; a
 * repeated key keeps its last value, as JSON.parse does; strings are re-escaped one way; numbers
 * stay exactly as written (`1.0` is not `1`, and an integer beyond 2^53 keeps its digits),
 * because a node may read them differently and merging would be wrong.
 */

/** Deepest nesting accepted: subscription params are a few levels deep at most. */
const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Thrown for text that is not JSON (or nests deeper than MAX_DEPTH). */
export class CanonicalJsonError extends Error {}

class Reader {
  i = 0;
  constructor(readonly text: string) {}

  space(): void {
    const t = this.text;
    while (
      this.i < t.length &&
      (t[this.i] === ' ' || t[this.i] === '\n' || t[this.i] === '\r' || t[this.i] === '\t')
    )
      this.i++;
  }

  fail(): never {
    throw new CanonicalJsonError(`not JSON at offset ${this.i}`);
  }

  string(): string {
    const t = this.text;
    const start = this.i;
    this.i++;
    while (this.i < t.length && t[this.i] !== '"') this.i += t[this.i] === '\\' ? 2 : 1;
    if (this.i >= t.length) this.fail();
    this.i++;
    try {
      return JSON.parse(t.slice(start, this.i)) as string;
    } catch {
      return this.fail();
    }
  }

  value(depth: number): string {
    if (depth > MAX_DEPTH) this.fail();
    this.space();
    const ch = this.text[this.i];
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    if (ch === '"') return JSON.stringify(this.string());
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return word;
      }
    }
    NUMBER.lastIndex = this.i;
    const match = NUMBER.exec(this.text);
    if (match === null) this.fail();
    this.i += match[0].length;
    return match[0];
  }

  object(depth: number): string {
    this.i++;
    const members = new Map<string, string>();
    this.space();
    if (this.text[this.i] === '}') {
      this.i++;
      return '{}';
    }
    for (;;) {
      this.space();
      if (this.text[this.i] !== '"') this.fail();
      const key = this.string();
      this.space();
      if (this.text[this.i++] !== ':') this.fail();
      members.delete(key);
      members.set(key, this.value(depth + 1));
      this.space();
      const next = this.text[this.i++];
      if (next === '}') break;
      if (next !== ',') this.fail();
    }
    const keys = [...members.keys()].sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${members.get(key)!}`).join(',')}}`;
  }

  array(depth: number): string {
    this.i++;
    const items: string[] = [];
    this.space();
    if (this.text[this.i] === ']') {
      this.i++;
      return '[]';
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.space();
      const next = this.text[this.i++];
      if (next === ']') break;
      if (next !== ',') this.fail();
    }
    return `[${items.join(',')}]`;
  }
}

/** The canonical form of JSON `text`; throws CanonicalJsonError when it is not JSON. */
export function canonicalJson(text: string): string {
  const reader = new Reader(text);
  const out = reader.value(0);
  reader.space();
  if (reader.i !== text.length) reader.fail();
  return out;
}
