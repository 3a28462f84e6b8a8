/**
 * The keyed variant of the hot-path benchmark (issue 27): cascade with the same config as the
 * plain target, plus `require_key = true` and one `[[keys]]` entry with no limits, loaded with
 * the key in the URL path (`/<key>`), as a wallet or dApp sends it. What it adds over the plain
 * target is the key's per-request work: one SHA-256 of the presented key, one map lookup, the
 * key's checks and its counters.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify, type TomlTable } from 'smol-toml';
import type { TargetSetup } from './hotpath-targets.js';

/** The key the keyed target's load presents (a benchmark's, never a secret). */
export const BENCH_KEY = 'ck_hotpath_bench_key_0123456789abcdefghijklmnopq';

/** Writes the keyed copy of the cascade config `plain`; returns its path. */
export function writeKeyedConfig(setup: TargetSetup, plain: string): string {
  const doc = parse(readFileSync(plain, 'utf8'));
  const server = doc.server as TomlTable;
  server.require_key = true;
  server.quotas_path = path.join(setup.tmpDir, 'quotas-keyed.json');
  doc.keys = [
    {
      name: 'bench',
      key_sha256: createHash('sha256').update(BENCH_KEY, 'utf8').digest('hex'),
    },
  ];
  const file = path.join(setup.tmpDir, 'cascade-hotpath-keyed.toml');
  writeFileSync(file, stringify(doc));
  return file;
}

/** The keyed target's URL: cascade's, with the key as the path. */
export function keyedUrl(url: string): string {
  return `${url.replace(/\/+$/, '')}/${BENCH_KEY}`;
}
