/**
 * The key each connection last passed with: a client sends the same key on every request of a
 * keep-alive connection, so comparing it with the one that connection sent before (in constant
 * time; both strings are the caller's own) skips the SHA-256 and the lookup. A generation
 * number, bumped whenever which secret maps to which key may have changed (a reload, a
 * rotation, a revoke), makes every connection hash again after a change. Weak: an entry goes
 * with its connection.
 */
import type { KeyState } from './key-state.js';

interface ConnectionKey {
  readonly presented: string;
  readonly state: KeyState;
  readonly generation: number;
}

/**
 * Whether two presented keys are the same, in a time that depends on their length alone (a
 * key's length says nothing: every `cascade key new` key has the same one).
 */
function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Connections' remembered keys (ClientKeys.identify asks it first). */
export class ConnectionKeys {
  #generation = 0;
  readonly #byConnection = new WeakMap<object, ConnectionKey>();

  /** The key `connection` passed with, if it presents the same secret and nothing changed. */
  known(connection: object, presented: string): KeyState | undefined {
    const known = this.#byConnection.get(connection);
    if (known === undefined || known.generation !== this.#generation) return undefined;
    return sameSecret(known.presented, presented) ? known.state : undefined;
  }

  /** Remembers that `connection` passed with `presented` as `state`. */
  remember(connection: object, presented: string, state: KeyState): void {
    this.#byConnection.set(connection, { presented, state, generation: this.#generation });
  }

  /** The keys in force changed: every connection's next call is hashed again. */
  forgetAll(): void {
    this.#generation++;
  }
}
