/**
 * A small file beside quotas.json (`<quotas>.lock`) saying which cascade process is using it
 * and where its admin listener is. It lets `cascade quota` talk to the running server (so a
 * reset is not undone by the server's next flush) and stops two servers from sharing one
 * usage file. A lock whose process is gone (kill -9) is stale and ignored.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { StartupError } from '../errors.js';

/** What the lock file says. */
export interface ServerLock {
  readonly pid: number;
  /** Loopback admin port, when the server has one. */
  readonly adminPort: number | null;
}

/** The lock file of a quotas file. */
export function lockPathOf(quotasPath: string): string {
  return `${quotasPath}.lock`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live server using `quotasPath`, or undefined (no lock, unreadable, or stale). */
export function readServerLock(quotasPath: string): ServerLock | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(lockPathOf(quotasPath), 'utf8'));
  } catch {
    return undefined;
  }
  const lock = parsed as Partial<ServerLock>;
  if (typeof lock.pid !== 'number' || !Number.isInteger(lock.pid) || lock.pid <= 0)
    return undefined;
  if (lock.pid === process.pid || !isAlive(lock.pid)) return undefined;
  const adminPort = typeof lock.adminPort === 'number' ? lock.adminPort : null;
  return { pid: lock.pid, adminPort };
}

/** Claims `quotasPath` for this process; throws StartupError when a live server holds it. */
export function acquireServerLock(quotasPath: string, adminPort: number | null): void {
  const holder = readServerLock(quotasPath);
  if (holder) {
    throw new StartupError(
      `${quotasPath} is in use by another cascade server (pid ${holder.pid})`,
      'two servers sharing one usage file would overwrite each other: stop the other one, or give this one its own quotas_path / --quotas',
    );
  }
  const path = lockPathOf(quotasPath);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify({ pid: process.pid, adminPort }));
  renameSync(temp, path);
}

/** Removes this process's lock (no-op when another process owns it). */
export function releaseServerLock(quotasPath: string): void {
  try {
    const parsed = JSON.parse(readFileSync(lockPathOf(quotasPath), 'utf8')) as Partial<ServerLock>;
    if (parsed.pid === process.pid) rmSync(lockPathOf(quotasPath), { force: true });
  } catch {
    // Nothing to release.
  }
}
