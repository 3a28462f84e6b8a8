/**
 * `cascade key new NAME`: a fresh random client key, printed once with the `[[keys]]` lines
 * to paste. Only the key's SHA-256 goes into a config; nothing stores the key itself, so a
 * lost key is replaced (a new one, the old entry removed), never recovered.
 */
import { randomBytes } from 'node:crypto';
import { KEY_NAME_PATTERN, UsageError, keyHash } from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';

/** Flags of `cascade key new`. */
export interface KeyNewOptions {
  readonly json?: boolean | undefined;
}

/** 32 random bytes (256 bits), URL-safe: it goes into URL paths and query strings as it is. */
export function newKeyText(): string {
  return `ck_${randomBytes(32).toString('base64url')}`;
}

/** `cascade key new NAME`. */
export function runKeyNew(name: string, options: KeyNewOptions, io: CommandIo): ExitCode {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `'${name}' is not a key name`,
      'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit',
    );
  }
  const key = newKeyText();
  const sha256 = keyHash(key);
  if (options.json) {
    io.out(JSON.stringify({ name, key, key_sha256: sha256 }));
    return 0;
  }
  io.out(
    [
      `New client key '${name}' (shown once; cascade keeps only its hash):`,
      '',
      `  ${key}`,
      '',
      'Paste into the config (or the file keys_file names), then reload (SIGHUP):',
      '',
      '[[keys]]',
      `name = "${name}"`,
      `key_sha256 = "${sha256}"`,
      '',
      `Clients pass it in the URL (http://HOST:PORT/${key}), as ?api-key=, or in an x-api-key or Authorization: Bearer header.`,
      '',
    ].join('\n'),
  );
  return 0;
}
