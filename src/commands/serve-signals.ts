/**
 * How `cascade serve` hears the process signals: SIGINT/SIGTERM stop it, SIGHUP reloads.
 */
import type { Logger } from 'pino';

/** What serve needs of whatever it runs: reload on SIGHUP. */
export interface Reloadable {
  reload(): unknown;
}

/** What the first stop signal and SIGHUP reach. */
export interface ServeSignals {
  /** Resolves with the first SIGINT/SIGTERM. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** From now on SIGHUP reloads `running`. */
  serving(running: Reloadable): void;
}

/**
 * Signal handling, installed before the server starts (its startup line may be answered by a
 * signal at once): the first SIGINT/SIGTERM resolves `stopped`, SIGHUP reloads. The handlers
 * stay installed, so a second Ctrl-C during the drain cannot kill the process before the final
 * quota write.
 */
export function handleSignals(log: Logger): ServeSignals {
  let running: Reloadable | undefined;
  process.on('SIGHUP', () => void running?.reload());
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) log.warn({ signal }, 'already shutting down; finishing in-flight requests');
      stopping = true;
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return { stopped, serving: (r) => (running = r) };
}
