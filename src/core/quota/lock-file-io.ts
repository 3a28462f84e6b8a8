/**
 * The file operations the server lock (server-lock.ts) is built from: create a file only if it
 * does not exist (hard link of a staged file, or `wx` where links are unsupported), and read
 * one version of a file with what tells that version apart from any other.
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { StartupError } from '../errors.js';

/** A file's text, trimmed; undefined when it cannot be read. */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Codes of file systems that cannot make hard links (exFAT, some network and FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** Creates `path` holding `content` unless it exists (false then); never half-written. */
export function createExclusive(path: string, temp: string, content: string): boolean {
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
export interface LockVersion {
  readonly text: string;
  /** Inode and modification time, read from the same open file as the bytes. */
  readonly identity: string;
}

/** Reads the lock file (undefined when there is none). */
export function readVersion(path: string): LockVersion | undefined {
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
