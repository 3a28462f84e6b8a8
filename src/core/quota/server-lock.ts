/**
 * A small file beside quotas.json (`<quotas>.lock`) saying which cascade process is using it
 * and where its admin listener is. It lets `cascade quota` talk to the running server (so a
 * reset is not undone by the server's next flush) and stops two servers from sharing one
 * usage file. A lock whose process is gone (kill -9) is stale and ignored.
 */
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
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

function inUse(quotasPath: string, holder: ServerLock): StartupError {
  return new StartupError(
    `${quotasPath} is in use by another cascade server (pid ${holder.pid})`,
    'two servers sharing one usage file would overwrite each other: stop the other one, or give this one its own quotas_path / --quotas',
  );
}

/**
 * Claims `quotasPath` for this process; throws StartupError when a live server holds it.
 * The lock is written to a temporary file and hard-linked into place: the link fails when the
 * lock already exists, so of two servers starting at the same instant exactly one wins, and
 * the lock is never seen half-written. A stale lock (its process is gone) is moved aside
 * first; only one process can move a given file, the other retries against the new lock.
 */
export function acquireServerLock(quotasPath: string, adminPort: number | null): void {
  const path = lockPathOf(quotasPath);
  const temp = `${path}.${process.pid}.tmp`;
  const content = JSON.stringify({ pid: process.pid, adminPort });
  writeFileSync(temp, content);
  try {
    for (let attempt = 0; ; attempt++) {
      if (claim(temp, path, content)) return;
      const holder = readServerLock(quotasPath);
      if (holder) throw inUse(quotasPath, holder);
      if (attempt >= 3) {
        throw new StartupError(
          `cannot claim ${path}: it keeps reappearing while other processes start`,
          'start one cascade server per quotas file at a time, or remove a lock no process owns',
        );
      }
      moveAsideStale(path);
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Codes of file systems that cannot make hard links (exFAT, some network and FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Puts the lock in place unless one exists: false when it does. Where hard links are not
 * supported, an exclusive create (`wx`) does the same job, with the content written right after.
 */
function claim(temp: string, path: string, content: string): boolean {
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === undefined || !NO_HARD_LINKS.has(code)) throw lockError(path, err);
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw lockError(path, err);
  }
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

function lockError(path: string, err: unknown): StartupError {
  const cause = err as NodeJS.ErrnoException;
  return new StartupError(
    `cannot create the lock ${path}: ${cause.code ?? cause.message}`,
    "the quotas file's directory must exist and be writable by this user",
  );
}

/** Moves a stale (or unreadable) lock out of the way; a no-op if another process already did. */
function moveAsideStale(path: string): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  // Between our check and the move, another starting server may have replaced the stale lock
  // with its own live one: if so, put it back.
  let moved: Partial<ServerLock> | undefined;
  try {
    moved = JSON.parse(readFileSync(aside, 'utf8')) as Partial<ServerLock>;
  } catch {
    moved = undefined;
  }
  const pid = moved?.pid;
  if (typeof pid === 'number' && pid !== process.pid && isAlive(pid)) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process took the place meanwhile; its lock stands.
    }
  }
  rmSync(aside, { force: true });
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
