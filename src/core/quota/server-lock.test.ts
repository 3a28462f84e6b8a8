import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { BOOT_ID, deadPid, mine, useLockDir } from '../../../test/support/lock-dir.js';
import { StartupError } from '../errors.js';
import {
  STALE_AFTER_MS,
  acquireServerLock,
  lockPathOf,
  processStartTime,
  readServerLock,
  refreshServerLock,
  releaseServerLock,
} from './server-lock.js';

const lock = useLockDir();

describe('server lock', () => {
  it('claims a free lock.quotas file and releases it, leaving no temporary files', () => {
    acquireServerLock(lock.quotas, 9100);
    expect(lock.lockOf()).toEqual(mine(9100));
    expect(readdirSync(lock.dir)).toEqual(['quotas.json.lock']);
    releaseServerLock(lock.quotas);
    expect(existsSync(lockPathOf(lock.quotas))).toBe(false);
  });

  it('refuses a lock.quotas file a live server holds, and leaves its lock alone', () => {
    const pid = lock.otherLiveProcess();
    writeFileSync(lockPathOf(lock.quotas), JSON.stringify({ pid, adminPort: 9200 }));
    expect(readServerLock(lock.quotas)).toEqual({
      pid,
      host: hostname(),
      adminPort: 9200,
      local: true,
    });
    expect(() => acquireServerLock(lock.quotas, null)).toThrow(StartupError);
    expect(() => acquireServerLock(lock.quotas, null)).toThrow(
      `in use by another cascade server (pid ${pid})`,
    );
    expect(lock.lockOf()).toEqual({ pid, adminPort: 9200 });
    expect(readdirSync(lock.dir)).toEqual(['quotas.json.lock']);
  });

  it('takes over the lock of a server that died (kill -9) or a lock that is unreadable', () => {
    writeFileSync(lockPathOf(lock.quotas), JSON.stringify({ pid: deadPid(), adminPort: 1 }));
    acquireServerLock(lock.quotas, null);
    expect(lock.lockOf()).toEqual(mine(null));

    writeFileSync(lockPathOf(lock.quotas), '{"pid": 12');
    acquireServerLock(lock.quotas, 5);
    expect(lock.lockOf()).toEqual(mine(5));
    expect(readdirSync(lock.dir).filter((f) => !f.includes('.takeover-'))).toEqual([
      'quotas.json.lock',
    ]);
  });

  it('refuses a live holder in another container, even one with our pid (both pid 1)', () => {
    const other = {
      pid: process.pid,
      host: 'container-b',
      bootId: BOOT_ID,
      startTime: '1',
      adminPort: 9100,
    };
    writeFileSync(lockPathOf(lock.quotas), JSON.stringify(other));
    expect(() => acquireServerLock(lock.quotas, null)).toThrow(
      `in use by another cascade server (pid ${process.pid} on host container-b)`,
    );
    // Its admin port is on its own loopback, not ours.
    expect(readServerLock(lock.quotas)).toEqual({
      pid: process.pid,
      host: 'container-b',
      adminPort: null,
      local: false,
    });
    expect(lock.lockOf()).toEqual(other);
  });

  it('takes over the lock of another container that stopped refreshing it (crashed)', () => {
    const other = { pid: 1, host: 'container-b', bootId: BOOT_ID, startTime: '1', adminPort: null };
    writeFileSync(lockPathOf(lock.quotas), JSON.stringify(other));
    lock.age(STALE_AFTER_MS + 5000);
    expect(readServerLock(lock.quotas)).toBeUndefined();
    acquireServerLock(lock.quotas, 7);
    expect(lock.lockOf()).toEqual(mine(7));
  });

  it('loses to a server whose takeover of a stale lock is under way, its rename not landed yet', () => {
    const stale = JSON.stringify({
      pid: 1,
      host: 'container-b',
      bootId: BOOT_ID,
      startTime: '1',
      adminPort: null,
    });
    writeFileSync(lockPathOf(lock.quotas), stale);
    lock.age(STALE_AFTER_MS + 5000);
    // A live server has created the takeover token of this very lock version (named after its
    // inode, mtime and bytes) and was paused before its rename: under load, that pause is long.
    const pid = lock.otherLiveProcess();
    const taker = {
      pid,
      host: hostname(),
      bootId: BOOT_ID,
      startTime: processStartTime(pid),
      adminPort: null,
    };
    const { ino, mtimeNs } = statSync(lockPathOf(lock.quotas), { bigint: true });
    const digest = createHash('sha256').update(`${ino}-${mtimeNs}`).update(stale).digest('hex');
    writeFileSync(
      `${lockPathOf(lock.quotas)}.takeover-${digest.slice(0, 24)}`,
      JSON.stringify(taker),
    );
    expect(() => acquireServerLock(lock.quotas, null)).toThrow(
      `in use by another cascade server (pid ${pid})`,
    );
    expect(readFileSync(lockPathOf(lock.quotas), 'utf8')).toBe(stale);
  });

  it('takes over the lock of an earlier run of this container (same host and pid, older start)', () => {
    const earlier = { ...mine(null), startTime: '1' };
    writeFileSync(lockPathOf(lock.quotas), JSON.stringify(earlier));
    expect(readServerLock(lock.quotas)).toBeUndefined();
    acquireServerLock(lock.quotas, null);
    expect(lock.lockOf()).toEqual(mine(null));
  });

  it('takes over a lock written before the machine rebooted', () => {
    const pid = lock.otherLiveProcess();
    writeFileSync(
      lockPathOf(lock.quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: 'another-boot',
        startTime: '1',
        adminPort: null,
      }),
    );
    acquireServerLock(lock.quotas, null);
    expect(lock.lockOf()).toEqual(mine(null));
  });

  it('treats a live pid with another start time as a reused pid (stale)', () => {
    const pid = lock.otherLiveProcess();
    const started = processStartTime(pid)!;
    writeFileSync(
      lockPathOf(lock.quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: BOOT_ID,
        startTime: `${started}9`,
        adminPort: null,
      }),
    );
    expect(readServerLock(lock.quotas)).toBeUndefined();
    writeFileSync(
      lockPathOf(lock.quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: BOOT_ID,
        startTime: started,
        adminPort: null,
      }),
    );
    expect(readServerLock(lock.quotas)?.pid).toBe(pid);
  });

  it('refreshes its heartbeat while it holds the lock, and notices when it lost it', () => {
    acquireServerLock(lock.quotas, null);
    lock.age(30_000);
    const before = statSync(lockPathOf(lock.quotas)).mtimeMs;
    expect(refreshServerLock(lock.quotas)).toBe(true);
    expect(statSync(lockPathOf(lock.quotas)).mtimeMs).toBeGreaterThan(before);
    writeFileSync(
      lockPathOf(lock.quotas),
      JSON.stringify({ pid: 1, host: 'elsewhere', adminPort: null }),
    );
    expect(refreshServerLock(lock.quotas)).toBe(false);
    releaseServerLock(lock.quotas);
    expect(existsSync(lockPathOf(lock.quotas))).toBe(true); // not ours: left alone
  });
});
