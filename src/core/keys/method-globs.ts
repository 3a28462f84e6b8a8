/**
 * A key's `methods` list: globs where `*` matches any run of characters. Each method name is
 * matched once per key and remembered (bounded), so the request path pays one Map lookup.
 */

/** Most method names remembered per key: a client inventing names cannot grow it further. */
const MAX_REMEMBERED = 4096;

function compile(globs: readonly string[]): RegExp | undefined {
  if (globs.length === 0) return undefined;
  const escape = (glob: string) =>
    glob.replace(/[.+?^${}()|[\]\\:-]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^(?:${globs.map(escape).join('|')})$`);
}

/** Which methods one key may call. */
export class MethodGlobs {
  readonly #allow: RegExp | undefined;
  readonly #deny: RegExp | undefined;
  readonly #seen = new Map<string, boolean>();

  constructor(allow: readonly string[], deny: readonly string[]) {
    this.#allow = compile(allow);
    this.#deny = compile(deny);
  }

  /** Whether the key may call `method` (deny wins; no allow list = every method). */
  allows(method: string): boolean {
    if (this.#allow === undefined && this.#deny === undefined) return true;
    const known = this.#seen.get(method);
    if (known !== undefined) return known;
    const allowed =
      (this.#allow === undefined || this.#allow.test(method)) && !this.#deny?.test(method);
    if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.set(method, allowed);
    return allowed;
  }
}
