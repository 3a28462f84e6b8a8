/** The flags of `cascade serve`, and what its one-process and `--workers` paths share. */
import type { Logger } from 'pino';
import type { LoadResult } from '../core/index.js';
import type { ServeSignals } from './serve-signals.js';

/** Flags of `cascade serve`. */
export interface ServeOptions {
  readonly config?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly demo?: boolean | undefined;
  readonly accessLog?: boolean | undefined;
  readonly quotas?: string | undefined;
  readonly workers?: number | 'auto' | undefined;
  /** Overrides server.admin_port. */
  readonly adminPort?: number | undefined;
}

/** What the process that owns the config (one cascade, or the primary) runs with. */
export interface ServeContext {
  readonly quotasPath: string;
  readonly log: Logger;
  /** Re-reads and checks the config file; undefined: the demo has none. */
  readonly reloadSource: (() => LoadResult) | undefined;
  readonly signals: ServeSignals;
}
