import { describe, expect, it, vi } from 'vitest';
import type * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireServerLock, lockPathOf, releaseServerLock } from './server-lock.js';

/** linkSync fails as on a file system without hard links (exFAT, some SMB/FUSE mounts). */
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  const linkSync: typeof actual.linkSync = (existing) => {
    throw Object.assign(new Error(`EPERM: operation not permitted, link '${String(existing)}'`), {
      code: 'EPERM',
    });
  };
  return { ...actual, default: { ...actual, linkSync }, linkSync };
});

describe('server lock without hard links', () => {
  it('claims the file with an exclusive create and leaves no temporary files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cascade-nolink-'));
    const quotas = join(dir, 'quotas.json');
    try {
      acquireServerLock(quotas, 7);
      expect(JSON.parse(readFileSync(lockPathOf(quotas), 'utf8'))).toMatchObject({
        pid: process.pid,
        adminPort: 7,
      });
      expect(readdirSync(dir)).toEqual(['quotas.json.lock']);
      releaseServerLock(quotas);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
