/**
 * A small file beside quotas.json (`<quotas>.lock`) saying which cascade process is using it
 * and where its admin listener is. It lets `cascade quota` talk to the running server (so a
 * reset is not undone by the server's next flush) and stops two servers from sharing one
 * usage file — also across containers that share a volume, where both servers may be pid 1.
 *
 * The holder is named by host name, boot id, pid and the process's start time. On the same
 * host a lock is live while that very process runs (a reused pid has another start time). A
 * holder on another host or container cannot be checked from here: it proves it is alive by
 * touching the lock (a heartbeat); a lock untouched for STALE_AFTER_MS is stale.
 *
 * Claiming is exclusive (hard link, or `wx` where links are unsupported). Taking over a stale
 * lock is exclusive too: the taker first creates a token named after the stale lock's exact
 * bytes, which only one process can do, then replaces the lock by rename. A process that read
 * the same stale lock finds the token taken and loses; the lock is never seen half-written.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { StartupError } from '../errors.js';

/** What the lock file says, for a holder that is alive. */
export interface ServerLock {
  readonly pid: number;
  /** Host name of the holder (its container's, in a container). */
  readonly host: string;
  /** Loopback admin port, when the server has one and runs on this host. */
  readonly adminPort: number | null;
  /** True when the holder runs on this host (its admin port is reachable on 127.0.0.1). */
  readonly local: boolean;
}

/** How often a server touches its lock. */
export const HEARTBEAT_MS = 10_000;
/** A lock of another host untouched for this long is stale (its holder is gone). */
export const STALE_AFTER_MS = 60_000;
/** Takeover tokens are kept this long (a process that read the stale lock must still lose). */
const TOKEN_KEEP_MS = 10 * 60_000;

interface LockFile {
  readonly pid: number;
  readonly host?: string;
  readonly bootId?: string;
  readonly startTime?: string;
  readonly adminPort?: number | null;
}

/** The lock file of a quotas file. */
export function lockPathOf(quotasPath: string): string {
  return `${quotasPath}.lock`;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** This boot of the kernel (shared by the containers of one host); '' where unknown. */
const BOOT_ID = readText('/proc/sys/kernel/random/boot_id') ?? '';

/** A process's start time (clock ticks since boot, from /proc), or undefined where unknown. */
export function processStartTime(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process, as a lock names it. */
function me(adminPort: number | null): LockFile {
  return {
    pid: process.pid,
    host: hostname(),
    bootId: BOOT_ID,
    startTime: processStartTime(process.pid),
    adminPort,
  };
}

function parseLock(text: string): LockFile | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const lock = parsed as Partial<LockFile> | null;
  if (typeof lock?.pid !== 'number' || !Number.isInteger(lock.pid) || lock.pid <= 0)
    return undefined;
  return lock as LockFile;
}

function isMine(lock: LockFile): boolean {
  const self = me(null);
  return (
    lock.pid === self.pid &&
    (lock.host ?? self.host) === self.host &&
    (lock.bootId ?? self.bootId) === self.bootId &&
    lock.startTime === self.startTime
  );
}

/** Whether the lock's holder still runs: 'live', 'stale', or 'mine'. */
function holderOf(lock: LockFile, path: string): 'live' | 'stale' | 'mine' {
  if (isMine(lock)) return 'mine';
  const host = hostname();
  // An old-format lock (no host) was written on this host.
  if ((lock.host ?? host) === host) {
    if (lock.bootId !== undefined && lock.bootId !== BOOT_ID) return 'stale'; // rebooted since
    if (lock.pid === process.pid || !isAlive(lock.pid)) return 'stale';
    const started = processStartTime(lock.pid);
    // The pid was reused by another process since the lock was written.
    if (started !== undefined && lock.startTime !== undefined && started !== lock.startTime) {
      return 'stale';
    }
    return 'live';
  }
  // Another host or container: only its heartbeat says it is alive.
  try {
    return Date.now() - statSync(path).mtimeMs > STALE_AFTER_MS ? 'stale' : 'live';
  } catch {
    return 'stale';
  }
}

/** The live server (another process) using `quotasPath`, or undefined. */
export function readServerLock(quotasPath: string): ServerLock | undefined {
  const path = lockPathOf(quotasPath);
  const text = readText(path);
  const lock = text === undefined ? undefined : parseLock(text);
  if (lock === undefined || holderOf(lock, path) !== 'live') return undefined;
  return describe(lock);
}

function describe(lock: LockFile): ServerLock {
  const local = (lock.host ?? hostname()) === hostname();
  const adminPort = local && typeof lock.adminPort === 'number' ? lock.adminPort : null;
  return { pid: lock.pid, host: lock.host ?? hostname(), adminPort, local };
}

function inUse(quotasPath: string, holder: ServerLock): StartupError {
  const where = holder.local ? `pid ${holder.pid}` : `pid ${holder.pid} on host ${holder.host}`;
  return new StartupError(
    `${quotasPath} is in use by another cascade server (${where})`,
    holder.local
      ? 'two servers sharing one usage file would overwrite each other: stop the other one, or give this one its own quotas_path / --quotas'
      : `two servers sharing one usage file would overwrite each other: stop the one on ${holder.host}, or give this one its own quotas_path; a lock its holder stopped refreshing is taken over after ${STALE_AFTER_MS / 1000} s`,
  );
}

/** Codes of file systems that cannot make hard links (exFAT, some network and FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** Creates `path` holding `content` unless it exists (false then); never half-written. */
function createExclusive(path: string, temp: string, content: string): boolean {
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

/** A version of the lock file: its bytes, and what tells this file apart from any other. */
interface LockVersion {
  readonly text: string;
  /** Inode and modification time, read from the same open file as the bytes. */
  readonly identity: string;
}

/** Reads the lock file (undefined when there is none). */
function readVersion(path: string): LockVersion | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd, { bigint: true });
    const bytes = Buffer.alloc(Number(stat.size));
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return {
      text: bytes.toString('utf8', 0, read).trim(),
      identity: `${stat.ino}-${stat.mtimeNs}`,
    };
  } finally {
    closeSync(fd);
  }
}

/** The takeover token of one stale lock version: only one process can create it. */
function tokenPathOf(path: string, stale: LockVersion): string {
  const digest = createHash('sha256').update(stale.identity).update(stale.text).digest('hex');
  return `${path}.takeover-${digest.slice(0, 24)}`;
}

/** Removes takeover tokens old enough that nobody can still be acting on their stale lock. */
function sweepTokens(path: string): void {
  const prefix = `${basename(path)}.takeover-`;
  const dir = dirname(path);
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix)) continue;
      const file = join(dir, name);
      if (Date.now() - statSync(file).mtimeMs > TOKEN_KEEP_MS) rmSync(file, { force: true });
    }
  } catch {
    // Best effort: a leftover token is a few bytes.
  }
}

/** The live process that claimed the takeover of `stale` (its token holds its lock), if any. */
function takerOf(path: string, stale: LockVersion): LockFile | undefined {
  const token = tokenPathOf(path, stale);
  const text = readText(token);
  const lock = text === undefined ? undefined : parseLock(text);
  return lock !== undefined && holderOf(lock, token) === 'live' ? lock : undefined;
}

/**
 * Replaces the stale lock version `stale` with ours, unless another process got
 * to it first (false): only the process that creates the takeover token may replace it.
 */
function takeOver(path: string, temp: string, content: string, stale: LockVersion): boolean {
  if (!createExclusive(tokenPathOf(path, stale), temp, content)) return false;
  if (readVersion(path)?.identity !== stale.identity) return false; // replaced meanwhile
  const staged = `${temp}.staged`;
  writeFileSync(staged, content);
  renameSync(staged, path);
  return true;
}

/**
 * Claims `quotasPath` for this process; throws StartupError when a live server holds it,
 * here or on another host. A stale lock (its process gone, or not refreshed by a holder on
 * another host for STALE_AFTER_MS) is taken over by exactly one of the processes that find it.
 */
export function acquireServerLock(quotasPath: string, adminPort: number | null): void {
  const path = lockPathOf(quotasPath);
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const content = JSON.stringify(me(adminPort));
  writeFileSync(temp, content);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (createExclusive(path, temp, content)) return;
      const found = readVersion(path);
      if (found === undefined) continue; // released meanwhile: claim again
      const lock = parseLock(found.text);
      const holder = lock === undefined ? 'stale' : holderOf(lock, path);
      if (holder === 'live') throw inUse(quotasPath, describe(lock!));
      if (holder === 'mine' || takeOver(path, temp, content, found)) {
        if (holder === 'mine') writeFileSync(path, content);
        sweepTokens(path);
        return;
      }
      // Another process is taking the stale lock over. Its rename may not have landed yet
      // (a busy machine can pause it right there), and looking again would find the same
      // stale lock: its token names it, and while it runs the file is its.
      const taker = takerOf(path, found);
      if (taker !== undefined) throw inUse(quotasPath, describe(taker));
    }
    const holder = readServerLock(quotasPath);
    if (holder) throw inUse(quotasPath, holder);
    throw new StartupError(
      `cannot claim ${path}: it keeps changing while other processes start`,
      'start one cascade server per quotas file at a time',
    );
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * The heartbeat: touches this process's lock so servers elsewhere see it alive. False when
 * the lock is no longer ours (another server took it over after we stopped refreshing it).
 */
export function refreshServerLock(quotasPath: string): boolean {
  const path = lockPathOf(quotasPath);
  const text = readText(path);
  const lock = text === undefined ? undefined : parseLock(text);
  if (lock === undefined || !isMine(lock)) return false;
  try {
    const now = new Date();
    utimesSync(path, now, now);
    return true;
  } catch {
    return false;
  }
}

/** Removes this process's lock (no-op when another process owns it). */
export function releaseServerLock(quotasPath: string): void {
  const path = lockPathOf(quotasPath);
  const text = readText(path);
  const lock = text === undefined ? undefined : parseLock(text);
  if (lock !== undefined && isMine(lock)) rmSync(path, { force: true });
}
