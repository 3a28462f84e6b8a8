/**
 * Which chain a request is for (issue 28), from its URL path and `Host`: each chain is served
 * on its own paths (`/solana`, `/eth`), each with `/send-request` and client-key paths under it
 * (`/solana/<key>`, `/solana/<key>/send-request`), and optionally on host names whose plain
 * paths (`/`, `/<key>`) reach it. A config with top-level `[[nodes]]` has one chain at `/`.
 *
 * On the request path: one Map lookup per path tried — the path itself, then with one or two
 * trailing segments cut (the key and `/send-request`) — and none at all for the one-chain config.
 * A keep-alive connection that sends the same keyed path again (a client's every request) gets
 * the hit it got before, after one constant-time comparison instead of a walk over the key.
 */
import { proxyPathOf } from '../keys/presented-key.js';
import { SecretText } from '../keys/secret-text.js';

/** Where a request goes: the chain's target, and the key its path carries (if any). */
export interface ChainHit<T> {
  readonly target: T;
  /** A client key found in the path (`/solana/<key>`); undefined when none. */
  readonly key: string | undefined;
}

/** One chain's claims: its paths and host names. */
export interface ChainClaim<T> {
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  readonly target: T;
}

/** The path's parent (`/a/b` → `/a`), or undefined at the root. */
function parentOf(path: string): string | undefined {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? undefined : path.slice(0, cut);
}

/** Resolves (path, host) to a chain; built once per config, read on every request. */
export class ChainPaths<T> {
  readonly #byPath = new Map<string, T>();
  readonly #byHost = new Map<string, T>();
  /** The chain at `/` when it is the only claim (every `[[nodes]]` config): no lookups. */
  readonly #only: T | undefined;
  /** Its hit without a key. */
  readonly #onlyHit: ChainHit<T> | undefined;
  /** Each target's hit without a key, made once: a plain request allocates nothing here. */
  readonly #plain = new Map<T, ChainHit<T>>();
  /**
   * Each connection's last keyed path (on its `Host`) and its hit. The path holds a key, and on
   * a connection a front proxy shares it may be another client's: compared in constant time.
   */
  readonly #lastKeyed = new WeakMap<object, LastKeyed<T>>();

  constructor(claims: readonly ChainClaim<T>[]) {
    for (const claim of claims) {
      this.#plain.set(claim.target, { target: claim.target, key: undefined });
      for (const path of claim.paths) this.#byPath.set(path, claim.target);
      for (const host of claim.hosts) this.#byHost.set(host, claim.target);
    }
    const [first] = claims;
    this.#only =
      claims.length === 1 && first!.hosts.length === 0 && this.#byPath.size === 1
        ? this.#byPath.get('/')
        : undefined;
    this.#onlyHit = this.#only === undefined ? undefined : this.#plain.get(this.#only);
  }

  /** Every path served, for the 404 that lists them. */
  get paths(): string[] {
    return [...this.#byPath.keys()];
  }

  /**
   * The chain `path` (no query) on `host` reaches, or undefined: no chain serves it.
   * `connection` (the request's socket) remembers a keyed path for its next request.
   */
  resolve(
    path: string,
    host: string | undefined,
    keysOn: boolean,
    connection?: object,
  ): ChainHit<T> | undefined {
    const only = this.#only;
    if (only !== undefined && (path === '/' || path === '/send-request')) return this.#onlyHit;
    if (!keysOn || connection === undefined) return this.#resolve(path, host, keysOn);
    const last = this.#lastKeyed.get(connection);
    if (last !== undefined && last.host === host && last.path.matches(path)) return last.hit;
    const hit = this.#resolve(path, host, keysOn);
    if (hit?.key !== undefined)
      this.#lastKeyed.set(connection, { path: new SecretText(path), host, hit });
    return hit;
  }

  #resolve(path: string, host: string | undefined, keysOn: boolean): ChainHit<T> | undefined {
    const only = this.#only;
    if (only !== undefined) return this.#under(only, path, keysOn);
    if (this.#byHost.size > 0 && host !== undefined) {
      const target = this.#byHost.get(hostName(host));
      if (target !== undefined) {
        const hit = this.#under(target, path, keysOn);
        if (hit !== undefined) return hit;
      }
    }
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const exact = this.#byPath.get(trimmed);
    if (exact !== undefined) return this.#plain.get(exact);
    // `/chain/send-request`, `/chain/<key>`, then `/chain/<key>/send-request`.
    for (let base = parentOf(trimmed), depth = 0; base !== undefined && depth < 2; depth++) {
      const target = this.#byPath.get(base);
      if (target !== undefined) return this.#under(target, trimmed.slice(base.length), keysOn);
      base = parentOf(base);
    }
    const root = this.#byPath.get('/');
    return root === undefined ? undefined : this.#under(root, path, keysOn);
  }

  #under(target: T, rest: string, keysOn: boolean): ChainHit<T> | undefined {
    const proxyPath = proxyPathOf(rest, keysOn);
    if (proxyPath === undefined) return undefined;
    return proxyPath.key === undefined ? this.#plain.get(target) : { target, key: proxyPath.key };
  }
}

/** A connection's last keyed request: its path, its `Host`, where it went. */
interface LastKeyed<T> {
  readonly path: SecretText;
  readonly host: string | undefined;
  readonly hit: ChainHit<T>;
}

/** A `Host` header's name: lower case, without the port. */
function hostName(host: string): string {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : host.indexOf(':');
  return (end <= 0 ? host : host.slice(0, end)).toLowerCase();
}
