/**
 * A text that may hold a client's secret (a key, or a URL path carrying one), kept as its UTF-8
 * bytes and compared with a presented string in a time that depends on their lengths alone: a
 * keep-alive connection's next request is checked against what the connection sent before,
 * and on a connection a front proxy shares between clients that may be someone else's key.
 *
 * Why bytes: a JS loop of `charCodeAt` costs some 40 instructions a character pair (more on the
 * sliced strings a path split makes); one `TextEncoder#encodeInto` into a scratch array and an
 * XOR over 32-bit words is a tenth of that for a 48-character key. UTF-8 is what SHA-256 hashes
 * (`crypto.hash` of a string), so two texts match here exactly when their hashes would.
 */

/** Presented texts up to this many UTF-8 bytes are compared in the scratch array. */
const SCRATCH_BYTES = 1024;
const scratch = new Uint8Array(SCRATCH_BYTES);
const scratchWords = new Int32Array(scratch.buffer);
const encoder = new TextEncoder();

/** `bytes` (UTF-8) in 32-bit words, the last one padded with zero bytes. */
function wordsOf(bytes: Uint8Array): Int32Array {
  const padded = new Uint8Array((bytes.length + 3) & ~3);
  padded.set(bytes);
  return new Int32Array(padded.buffer);
}

/** A secret's text as UTF-8 words, compared in constant time (for its length). */
export class SecretText {
  readonly #words: Int32Array;
  readonly #bytes: number;

  constructor(text: string) {
    const bytes = encoder.encode(text);
    this.#bytes = bytes.length;
    this.#words = wordsOf(bytes);
  }

  /** Whether `text` is this text; its time says nothing of how much of it matched. */
  matches(text: string): boolean {
    // Three bytes a UTF-16 unit at most: a text this long fits the scratch array whole.
    if (text.length * 3 > SCRATCH_BYTES) {
      const bytes = encoder.encode(text);
      return bytes.length === this.#bytes && this.#matchesWords(wordsOf(bytes));
    }
    const written = encoder.encodeInto(text, scratch).written;
    if (written !== this.#bytes) return false;
    // Zero the last word's padding: bytes a longer text left there must not count.
    for (let i = written; (i & 3) !== 0; i++) scratch[i] = 0;
    return this.#matchesWords(scratchWords);
  }

  /** Whether `words` (as many bytes as this text, at least as many words) hold this text. */
  #matchesWords(words: Int32Array): boolean {
    const mine = this.#words;
    let diff = 0;
    for (let i = 0; i < mine.length; i++) diff |= mine[i]! ^ words[i]!;
    return diff === 0;
  }
}
