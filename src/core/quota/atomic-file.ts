/**
 * Replacing a file so that a crash at any moment leaves the old or the new complete file: a
 * uniquely named temp file in the same directory is written and fsynced, renamed over the
 * target, then the directory is fsynced. quotas.json and the client keys' runtime changes
 * (keys/key-changes-file.ts) are written this way.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Where replacing failed: the target is untouched ('write'), or renamed but maybe not durable ('sync'). */
export class AtomicWriteError extends Error {
  readonly stage: 'write' | 'sync';

  constructor(stage: 'write' | 'sync', cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'AtomicWriteError';
    this.stage = stage;
  }
}

/**
 * Replaces `path` with `text` atomically. On failure the temp file is removed and an
 * AtomicWriteError carrying the file system's error as its cause is thrown.
 */
export async function replaceFileAtomically(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  // Unique per process and call, so overlapping writers never share (or delete) a temp file.
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeSynced(temp, text);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw new AtomicWriteError('write', err);
  }
  try {
    await syncDirectory(dir);
  } catch (err) {
    throw new AtomicWriteError('sync', err);
  }
}

async function writeSynced(file: string, text: string): Promise<void> {
  const handle = await open(file, 'wx');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes the rename itself durable. Windows cannot open a directory for fsync (nor needs to). */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The file system's error code of `err` (or of its cause), if any. */
export function fileErrorCode(err: unknown): string | undefined {
  const inner = err instanceof AtomicWriteError ? err.cause : err;
  if (typeof inner !== 'object' || inner === null || !('code' in inner)) return undefined;
  return typeof inner.code === 'string' ? inner.code : undefined;
}

/** "CODE: reason" of a file system error (node's messages repeat the code and the path). */
export function fileErrorReason(err: unknown): string {
  const inner = err instanceof AtomicWriteError ? err.cause : err;
  const code = fileErrorCode(inner);
  const message = inner instanceof Error ? inner.message : String(inner);
  const reason = message.replace(/^[A-Z]+: /, '').replace(/, [a-z]+( '.*')?$/, '');
  return code === undefined ? reason : `${code}: ${reason}`;
}

/**
 * Removes the temp files writers of `path` left behind when they were killed mid-write (named
 * `.<file>.<pid>.<random>.tmp`, from another process than this one). Only the process that owns
 * the file (the server holding the quotas lock) may call it: no other writer is running then.
 */
export async function removeStaleTemps(path: string): Promise<number> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const stale = names.filter(
    (name) =>
      name.startsWith(prefix) &&
      name.endsWith('.tmp') &&
      /^\d+\.[0-9a-f]+\.tmp$/.test(name.slice(prefix.length)) &&
      !name.startsWith(`${prefix}${process.pid}.`),
  );
  await Promise.all(stale.map((name) => rm(join(dir, name), { force: true })));
  return stale.length;
}
