/**
 * The key each connection last passed with: a client sends the same key on every request of a
 * keep-alive connection, so comparing it with the one that connection sent before skips the
 * SHA-256 and the lookup. The comparison takes constant time: on a connection a front proxy
 * shares between clients, the key before may be another client's. A generation
 * number, bumped whenever which secret maps to which key may have changed (a reload, a
 * rotation, a revoke), makes every connection hash again after a change. Weak: an entry goes
 * with its connection.
 *
 * A key that came in a URL path brings the object its path resolved to (http/chain-paths.ts):
 * when the connection's path was the same as before, that is the very object, already compared
 * in constant time there, so the key needs no second comparison.
 */
import type { KeyState } from './key-state.js';
import { SecretText } from './secret-text.js';

interface ConnectionKey {
  /** Compared in a time that depends on lengths alone (a key's length says nothing: every
   * `cascade key new` key has the same one). */
  readonly presented: SecretText;
  /** What the key came from (a path's hit), compared by identity; undefined: no such thing. */
  readonly source: object | undefined;
  readonly state: KeyState;
  readonly generation: number;
}

/** Connections' remembered keys (ClientKeys.identify asks it first). */
export class ConnectionKeys {
  #generation = 0;
  readonly #byConnection = new WeakMap<object, ConnectionKey>();

  /**
   * The key `connection` passed with, if it presents the same secret and nothing changed.
   * `source`: the object `presented` was read from, if it stands for that text alone.
   */
  known(connection: object, presented: string, source?: object): KeyState | undefined {
    const known = this.#byConnection.get(connection);
    if (known === undefined || known.generation !== this.#generation) return undefined;
    if (source !== undefined && known.source === source) return known.state;
    return known.presented.matches(presented) ? known.state : undefined;
  }

  /** Remembers that `connection` passed with `presented` (read from `source`) as `state`. */
  remember(connection: object, presented: string, state: KeyState, source?: object): void {
    this.#byConnection.set(connection, {
      presented: new SecretText(presented),
      source,
      state,
      generation: this.#generation,
    });
  }

  /** The keys in force changed: every connection's next call is hashed again. */
  forgetAll(): void {
    this.#generation++;
  }
}
