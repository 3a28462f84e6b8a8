import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  AtomicWriteError,
  fileErrorCode,
  fileErrorReason,
  replaceFileAtomically,
} from './atomic-file.js';
import { CascadeError, QuotaFileError } from '../errors.js';
import { QUOTA_FILE_HINT, formatQuotaFile, parseQuotaFile } from './quota-format.js';
import type { QuotaSnapshot } from './usage-ledger.js';

/** quotas.json could not be written; the previous file, if any, is untouched. */
export class QuotaWriteError extends CascadeError {
  /** The file that was being written. */
  readonly path: string;

  constructor(path: string, reason: string, hint: string, options?: { cause?: unknown }) {
    super('QUOTA_FILE_WRITE_FAILED', `cannot write ${path}: ${reason}`, hint, options);
    this.name = 'QuotaWriteError';
    this.path = path;
  }
}

/**
 * Reads quotas.json. A missing file is an empty snapshot; a file that cannot be read or does
 * not hold valid usage throws a one-line QuotaFileError: it is never silently reset.
 */
export async function readQuotaFile(path: string): Promise<QuotaSnapshot> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (fileErrorCode(err) === 'ENOENT') return new Map();
    throw new QuotaFileError(`${path}: cannot be read (${fileErrorReason(err)})`, QUOTA_FILE_HINT, {
      cause: err,
    });
  }
  // Editors on Windows may prepend a byte-order mark; it says nothing about the content.
  return parseQuotaFile(text.startsWith('\uFEFF') ? text.slice(1) : text, path);
}

/**
 * Replaces quotas.json atomically: a uniquely named temp file in the same directory is written
 * and fsynced, renamed over the target, then the directory is fsynced. A crash at any moment
 * leaves the old or the new complete file. On failure the temp file is removed and a
 * QuotaWriteError naming the path is thrown (a RangeError, before any I/O, for a snapshot that
 * would not read back).
 */
export async function writeQuotaFile(path: string, snapshot: QuotaSnapshot): Promise<void> {
  const text = formatQuotaFile(snapshot);
  try {
    await replaceFileAtomically(path, text);
  } catch (err) {
    throw writeError(path, err);
  }
}

function writeError(path: string, err: unknown): QuotaWriteError {
  const cause = err instanceof AtomicWriteError ? err.cause : err;
  return new QuotaWriteError(path, fileErrorReason(err), writeHint(fileErrorCode(err), path), {
    cause,
  });
}

function writeHint(code: string | undefined, path: string): string {
  const dir = dirname(path);
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return `create the directory ${dir}, or point [server] quotas_path elsewhere`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return `make ${dir} writable by this user, or point [server] quotas_path elsewhere`;
    case 'EISDIR':
      return `${path} is a directory; point [server] quotas_path at a file`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some disk space; usage is kept in memory and written again on the next flush';
    default:
      return 'usage is kept in memory and written again on the next flush';
  }
}
