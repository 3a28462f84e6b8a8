import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuotaFileError } from '../errors.js';
import { QUOTA_FILE_HINT } from './quota-format.js';
import { QuotaWriteError, readQuotaFile, writeQuotaFile } from './quota-file.js';
import type { QuotaEntry, QuotaSnapshot } from './usage-ledger.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cascade-quota-'));
  file = join(dir, 'quotas.json');
});

afterEach(async () => {
  await chmod(dir, 0o755).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

const snapshotOf = (entries: [string, QuotaEntry][]): QuotaSnapshot => new Map(entries);
const isRoot = process.getuid?.() === 0;

describe('readQuotaFile', () => {
  it('reads a missing file as empty', async () => {
    expect(await readQuotaFile(file)).toEqual(new Map());
  });

  it('reads what writeQuotaFile wrote', async () => {
    const snapshot = snapshotOf([
      ['b', { used: 7, periodStart: '2026-08-01' }],
      ['A', { used: 0, periodStart: '2024-02-29' }],
    ]);
    await writeQuotaFile(file, snapshot);
    expect(await readQuotaFile(file)).toEqual(snapshot);
  });

  it('ignores a byte-order mark', async () => {
    await writeFile(file, '\uFEFF{"n":{"used":1,"period_start":"2026-08-01"}}');
    expect((await readQuotaFile(file)).get('n')).toEqual({ used: 1, periodStart: '2026-08-01' });
  });

  it('refuses a corrupt file with the path, the problem and the way out', async () => {
    await writeFile(file, '{"helius":{"used":"12","period_start":"2026-08-01"}}');
    const err = await rejection<QuotaFileError>(readQuotaFile(file));
    expect(err).toBeInstanceOf(QuotaFileError);
    expect(err.message).toBe(`${file}: "helius".used must be a whole number ≥ 0, got "12"`);
    expect(err.hint).toBe(QUOTA_FILE_HINT);
    expect(err.hint).toContain('cascade quota reset --all');
  });

  it('refuses a truncated file rather than starting from zero', async () => {
    await writeFile(file, '{\n  "helius": {\n    "used": 12');
    await expect(readQuotaFile(file)).rejects.toThrow(/is not valid JSON/);
  });

  it('refuses a path it cannot read as a file', async () => {
    await mkdir(file);
    const err = await rejection<QuotaFileError>(readQuotaFile(file));
    expect(err).toBeInstanceOf(QuotaFileError);
    expect(err.message).toBe(`${file}: cannot be read (EISDIR: illegal operation on a directory)`);
  });

  it.skipIf(isRoot)('refuses a file it may not read', async () => {
    await writeFile(file, '{}');
    await chmod(file, 0o000);
    await expect(readQuotaFile(file)).rejects.toThrow(/cannot be read \(EACCES/);
  });
});

describe('writeQuotaFile', () => {
  const one = snapshotOf([['helius', { used: 0, periodStart: '2026-08-15' }]]);

  it('writes the exact bytes of the format', async () => {
    await writeQuotaFile(file, one);
    const bytes = await readFile(file);
    expect(bytes.toString('utf8')).toBe(
      '{\n  "helius": {\n    "used": 0,\n    "period_start": "2026-08-15"\n  }\n}',
    );
    expect(bytes.at(-1)).toBe('}'.charCodeAt(0));
  });

  it('replaces an existing file and leaves no temp file behind', async () => {
    await writeFile(file, 'old');
    for (let used = 0; used < 20; used++) {
      await writeQuotaFile(file, snapshotOf([['n', { used, periodStart: '2026-08-01' }]]));
    }
    expect(await readdir(dir)).toEqual(['quotas.json']);
    expect((await readQuotaFile(file)).get('n')?.used).toBe(19);
  });

  it('overlapping writes each leave a complete file and no temp files', async () => {
    const writes = Array.from({ length: 25 }, (_, used) =>
      writeQuotaFile(file, snapshotOf([['n', { used, periodStart: '2026-08-01' }]])),
    );
    await Promise.all(writes);
    expect(await readdir(dir)).toEqual(['quotas.json']);
    expect((await readQuotaFile(file)).get('n')?.used).toBeGreaterThanOrEqual(0);
  });

  it('into a missing directory throws a clear error naming the path', async () => {
    const target = join(dir, 'nope', 'quotas.json');
    const err = await rejection<QuotaWriteError>(writeQuotaFile(target, one));
    expect(err).toBeInstanceOf(QuotaWriteError);
    expect(err.message).toBe(`cannot write ${target}: ENOENT: no such file or directory`);
    expect(err.hint).toContain(`create the directory ${join(dir, 'nope')}`);
    expect(err.code).toBe('QUOTA_FILE_WRITE_FAILED');
    expect(err.path).toBe(target);
  });

  it('over a directory fails, keeps the directory and removes its temp file', async () => {
    await mkdir(file);
    const err = await rejection<QuotaWriteError>(writeQuotaFile(file, one));
    expect(err).toBeInstanceOf(QuotaWriteError);
    expect(err.message).toMatch(new RegExp(`^cannot write ${file}: E[A-Z]+: `));
    expect(await readdir(dir)).toEqual(['quotas.json']);
  });

  it.skipIf(isRoot)('into a read-only directory fails and keeps the old file', async () => {
    await writeQuotaFile(file, one);
    await chmod(dir, 0o555);
    const other = snapshotOf([['helius', { used: 5, periodStart: '2026-08-15' }]]);
    const err = await rejection<QuotaWriteError>(writeQuotaFile(file, other));
    expect(err).toBeInstanceOf(QuotaWriteError);
    expect(err.message).toMatch(/EACCES/);
    expect(err.hint).toContain('writable');
    expect(await readQuotaFile(file)).toEqual(one);
    expect(await readdir(dir)).toEqual(['quotas.json']);
  });

  it('refuses a snapshot it could not read back, leaving the file alone', async () => {
    await writeQuotaFile(file, one);
    const bad = snapshotOf([['helius', { used: -1, periodStart: '2026-08-15' }]]);
    await expect(writeQuotaFile(file, bad)).rejects.toThrow(RangeError);
    expect(await readQuotaFile(file)).toEqual(one);
  });

  it('a reader never sees a partial file while 200 writes replace it', async () => {
    let writing = true;
    const seen = new Set<number>();
    const reader = (async () => {
      while (writing) {
        const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
          if (e.code === 'ENOENT' && seen.size === 0) return undefined;
          throw e;
        });
        if (text === undefined) continue;
        const snapshot = await readQuotaFile(file);
        expect(snapshot.size).toBe(3);
        const used = snapshot.get('b')?.used ?? -1;
        expect(used).toBeGreaterThanOrEqual(0);
        seen.add(used);
        expect(JSON.parse(text)).toBeTypeOf('object');
      }
    })();
    for (let i = 0; i < 200; i++) {
      await writeQuotaFile(
        file,
        snapshotOf([
          ['a', { used: i * 1000, periodStart: '2026-08-01' }],
          ['b', { used: i, periodStart: '2026-08-01' }],
          ['c'.repeat(1 + (i % 50)), { used: 10 ** (i % 15), periodStart: '2026-07-31' }],
        ]),
      );
    }
    writing = false;
    await reader;
    expect(seen.size).toBeGreaterThan(0);
    expect(await readdir(dir)).toEqual(['quotas.json']);
  });
});

/** The error `promise` rejects with; fails the test when it resolves. */
async function rejection<T>(promise: Promise<unknown>): Promise<T> {
  try {
    await promise;
  } catch (err) {
    return err as T;
  }
  throw new Error('expected a rejection');
}
