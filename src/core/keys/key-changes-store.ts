/**
 * Keeps the client keys' runtime changes on disk (key-changes-file.ts) as they change: an
 * operator's revoke or budget is written before the admin API answers, the fleet's changes
 * (replicas) as a sync brings them. One write at a time, in order; a write that would not
 * change the file is skipped, and one that failed is tried again (a later change, or a timer).
 */
import type { Logger } from 'pino';
import type { ClientKeys } from './client-keys.js';
import { formatKeyChanges, writeKeyChanges } from './key-changes-file.js';
import type { SavedOverride } from './key-overrides.js';

/** How long after a failed background write the next try comes. */
const RETRY_MS = 5000;

/** The runtime changes of one process's keys, kept in one file (the primary's, with workers). */
export class KeyChangesStore {
  readonly path: string;
  readonly #keys: ClientKeys;
  /** The file's text as last read or written. */
  #written: string;
  #queue: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  #lastError = '';

  private constructor(path: string, keys: ClientKeys, written: string) {
    this.path = path;
    this.#keys = keys;
    this.#written = written;
  }

  /**
   * Puts the changes read from `path` (readKeyChanges, before anything is served) in force on
   * `keys`, and keeps the file from then on.
   */
  static restore(path: string, keys: ClientKeys, saved: readonly SavedOverride[]): KeyChangesStore {
    keys.restoreChanges(saved);
    return new KeyChangesStore(path, keys, formatKeyChanges(keys.book.saved()));
  }

  /** Writes the keys' changes if they differ from the file; rejects when the write failed. */
  save(): Promise<void> {
    const next = this.#queue.catch(() => undefined).then(() => this.#write());
    this.#queue = next;
    return next;
  }

  /**
   * `save` for an operator's change (the caller reports a failure); a failed write is tried
   * again in the background until one succeeds, so fixing the directory is enough.
   */
  saveNow(logger: Logger): Promise<void> {
    const done = this.save();
    done.catch((err: unknown) => {
      // The caller reported this failure; the retry that succeeds says so.
      this.#lastError = (err as Error).message;
      this.#retryLater(logger);
    });
    return done;
  }

  /** `save`, its failure logged (once per distinct error) and tried again later. */
  saveInBackground(logger: Logger): void {
    this.save().then(
      () => {
        if (this.#lastError !== '')
          logger.info({ file: this.path }, 'client keys’ runtime changes saved again');
        this.#lastError = '';
      },
      (err: unknown) => {
        const message = (err as Error).message;
        if (message !== this.#lastError)
          logger.error(
            { err: message, file: this.path },
            'cannot save client keys’ runtime changes (revokes, budgets); they hold until a restart, retrying every 5 s',
          );
        this.#lastError = message;
        this.#retryLater(logger);
      },
    );
  }

  #retryLater(logger: Logger): void {
    if (this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.saveInBackground(logger);
    }, RETRY_MS);
    this.#retry.unref();
  }

  /** The last write, at shutdown (a failure is logged: the changes made since are lost). */
  async close(logger: Logger): Promise<void> {
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.save().catch((err: unknown) =>
      logger.error(
        { err: (err as Error).message, file: this.path },
        'final write of client keys’ runtime changes failed; the last ones are lost at this restart',
      ),
    );
  }

  async #write(): Promise<void> {
    const text = formatKeyChanges(this.#keys.book.saved());
    if (text === this.#written) return;
    await writeKeyChanges(this.path, text);
    this.#written = text;
  }
}
