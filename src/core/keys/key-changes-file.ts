/**
 * The client keys' runtime changes on disk: every revoke, un-revoke and runtime budget an
 * operator made (keys/key-overrides.ts), kept beside quotas.json so that a restart — a deploy,
 * a crash, `kill -9` — does not put a revoked key back in service. One JSON object, a member
 * per field of the book, written atomically (a crash leaves the old or the new file):
 *
 *   {
 *     "budget:web": { "value": "750000@-", "version": 1765150000123, "pending": true },
 *     "revoke:web:3f2a9c0d41b7e6a8": { "value": "1", "version": 1765150000123 }
 *   }
 *
 * `version` is when the change was made (wall-clock ms; the newest change to a field wins, see
 * key-overrides.ts), `pending` marks a change Redis has not taken yet (replicas: it goes at the
 * next sync after a restart; alone, every change stays pending). A revoke names the key
 * and the first 16 hex digits of its secret's SHA-256, never the secret.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CascadeError, QuotaFileError } from '../errors.js';
import { fileErrorCode, fileErrorReason, replaceFileAtomically } from '../quota/atomic-file.js';
import type { SavedOverride } from './key-overrides.js';

/** What to do about a file cascade refuses to read. */
const FILE_HINT =
  'fix it by hand, or delete it: alone, the config’s keys then apply again (a key revoked at runtime is served again — revoke it again, or remove its [[keys]] entry); with replicas on Redis, the fleet’s changes are read back from Redis';
/** What to do about a file cascade cannot open. */
const READ_HINT = 'make it a readable file for the user cascade runs as';

const REVOKE_FIELD = /^revoke:[A-Za-z0-9][A-Za-z0-9._-]{0,63}:[0-9a-f]{16}$/;
const BUDGET_FIELD = /^budget:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const BUDGET_VALUE = /^(-|\d{1,16}@(\d{1,16}|-))$/;

/** The file beside `quotasPath`: `quotas.json` → `quotas.key-changes.json`. */
export function keyChangesPath(quotasPath: string): string {
  const stem = quotasPath.endsWith('.json') ? quotasPath.slice(0, -'.json'.length) : quotasPath;
  return `${stem}.key-changes.json`;
}

/** The file's text for `saved` (in field order, 2-space JSON, no trailing newline). */
export function formatKeyChanges(saved: readonly SavedOverride[]): string {
  if (saved.length === 0) return '{}';
  const members = saved.map(({ field, value, version, pending }) => {
    const still = pending ? ', "pending": true' : '';
    return `  ${JSON.stringify(field)}: { "value": ${JSON.stringify(value)}, "version": ${version}${still} }`;
  });
  return `{\n${members.join(',\n')}\n}`;
}

/**
 * Parses the file's text: a field cascade does not make, or a value, version, `at` or `pending`
 * it would not write, throws a QuotaFileError naming `file` and the entry. Other members of an
 * entry are ignored (a later cascade may write more).
 */
export function parseKeyChanges(text: string, file: string): SavedOverride[] {
  let root: unknown;
  try {
    root = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (err) {
    throw invalid(file, `is not valid JSON (${(err as Error).message})`);
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root))
    throw invalid(file, 'must be a JSON object of runtime key changes');
  const saved: SavedOverride[] = [];
  for (const [field, entry] of Object.entries(root)) {
    const name = JSON.stringify(field);
    const isRevoke = REVOKE_FIELD.test(field);
    if (!isRevoke && !BUDGET_FIELD.test(field))
      throw invalid(
        file,
        `${name} is not a change cascade makes (revoke:NAME:FINGERPRINT or budget:NAME)`,
      );
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw invalid(file, `${name} must be an object {"value": …, "version": …}`);
    const { value, version, pending, at } = entry as Record<string, unknown>;
    const valid = isRevoke
      ? value === '0' || value === '1'
      : typeof value === 'string' && BUDGET_VALUE.test(value) && exactBudget(value);
    if (!valid)
      throw invalid(
        file,
        `${name}.value must be ${isRevoke ? '"1" (revoked) or "0"' : '"CREDITS@BASE" or "-" (whole numbers up to 2^53 − 1; BASE "-" for none)'}, got ${JSON.stringify(value)}`,
      );
    if (!isWhole(version))
      throw invalid(
        file,
        `${name}.version must be a whole number ≥ 0, got ${JSON.stringify(version)}`,
      );
    // `at`: when a change was made, in files of the first cascade that kept them (its version
    // was 0 until Redis gave one); now the version itself says when.
    if (at !== undefined && !isWhole(at))
      throw invalid(
        file,
        `${name}.at must be a time in ms (a whole number ≥ 0), got ${JSON.stringify(at)}`,
      );
    if (pending !== undefined && typeof pending !== 'boolean')
      throw invalid(file, `${name}.pending must be true or false, got ${JSON.stringify(pending)}`);
    saved.push({
      field,
      value: value as string,
      version: version === 0 && at !== undefined ? at : version,
      pending: pending === true,
    });
  }
  return saved;
}

/** Reads the file; a missing one holds no changes. */
export async function readKeyChanges(path: string): Promise<SavedOverride[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (fileErrorCode(err) === 'ENOENT') return [];
    throw new QuotaFileError(`${path}: cannot be read (${fileErrorReason(err)})`, READ_HINT, {
      cause: err,
    });
  }
  return parseKeyChanges(text, path);
}

/** The file could not be written; the change holds in memory, and the previous file is intact. */
export class KeyChangesWriteError extends CascadeError {
  constructor(path: string, err: unknown) {
    super(
      'KEY_CHANGES_WRITE_FAILED',
      `cannot write ${path}: ${fileErrorReason(err)}`,
      `${dirname(path)} must be writable by this user and ${path} a file; the change is in force, and the server writes it again every 5 s until it can`,
      { cause: err },
    );
    this.name = 'KeyChangesWriteError';
  }
}

/** Replaces the file with `text` atomically. */
export async function writeKeyChanges(path: string, text: string): Promise<void> {
  try {
    await replaceFileAtomically(path, text);
  } catch (err) {
    throw new KeyChangesWriteError(path, err);
  }
}

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Whether a budget value's numbers are counted exactly (the admin API refuses more, too). */
function exactBudget(value: string): boolean {
  return (
    value === '-' ||
    value.split('@').every((part) => part === '-' || Number.isSafeInteger(Number(part)))
  );
}

function invalid(file: string, problem: string): QuotaFileError {
  return new QuotaFileError(`${file} ${problem}`, FILE_HINT);
}
