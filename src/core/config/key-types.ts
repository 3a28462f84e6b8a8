/**
 * Client keys (`[[keys]]`, issue 27): who may spend the team's credits, how fast and how much.
 * A key is known by its name (logs, metrics, usage); its secret exists here only as the
 * SHA-256 of the key text, never as the text itself.
 */

/** One `[[keys]]` entry, validated, defaults applied. */
export interface ClientKeyConfig {
  readonly name: string;
  /** Lower-case hex SHA-256 of the key text (from `key_sha256`, or hashed from `key_env`). */
  readonly sha256: string;
  /** Method globs the key may call (`*` matches any run of characters); empty = every method. */
  readonly allow: readonly string[];
  /** Method globs the key may never call (`"!name"` entries of `methods`); deny wins. */
  readonly deny: readonly string[];
  /** Requests per second (burst = the limit); undefined = no limit. */
  readonly rpsLimit: number | undefined;
  /** Requests in flight at once; undefined = no limit. */
  readonly maxConcurrent: number | undefined;
  /** Credits per billing period; undefined = no budget. */
  readonly monthlyCredits: number | undefined;
  /** The day of the month the budget resets (1..=31, a short month's last day past its end). */
  readonly resetDay: number;
  /** Browser origins that may use the key (CORS answers only for them); empty = any caller. */
  readonly origins: readonly string[];
  /** Requests per second per client IP (browser keys); undefined = no per-IP limit. */
  readonly perIpRps: number | undefined;
  /** Largest batch the key may send; undefined = `[server] max_batch_size`. */
  readonly maxBatchSize: number | undefined;
  /** Subscriptions one connection of the key may hold; undefined = the server's limit. */
  readonly maxSubscriptions: number | undefined;
  /** The `[[chains]]` the key may call (by name); absent or empty = every chain. */
  readonly chains?: readonly string[];
  /** Param guards: a method listed here is allowed only with its first param in the list. */
  readonly params: Readonly<Record<string, readonly string[]>>;
  /** A method listed here is served only with one of its filters (config/heavy-read-fields.ts). */
  readonly requiredFilters?: Readonly<Record<string, readonly string[]>>;
  /** Answers bigger than this many bytes are refused to the key; absent: no cap. */
  readonly maxAnswerBytes?: number;
}

/** Every key in force: the config's `[[keys]]` and the keys file's, in order. */
export interface KeysConfig {
  readonly keys: readonly ClientKeyConfig[];
  /** Absolute path of `keys_file`, when the config names one. */
  readonly file: string | undefined;
}

/** Where a client may put its key (the README and every 401 say the same). */
export const HOW_TO_PASS_A_KEY =
  'put your key in the URL path (http://HOST:PORT/<key>), in ?api-key=<key>, or in an x-api-key or "Authorization: Bearer <key>" header';
