import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
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

let dir: string;
let quotas: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cascade-lock-'));
  quotas = join(dir, 'quotas.json');
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** A live process that is not this one. */
function otherLiveProcess(): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], {
    stdio: 'ignore',
  });
  children.push(child);
  return child.pid!;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(run.stdout);
}

const lockOf = (): Record<string, unknown> =>
  JSON.parse(readFileSync(lockPathOf(quotas), 'utf8')) as Record<string, unknown>;
const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
/** The lock this process writes (its identity, as other processes see it). */
const mine = (adminPort: number | null) => ({
  pid: process.pid,
  host: hostname(),
  bootId: BOOT_ID,
  startTime: processStartTime(process.pid),
  adminPort,
});
/** Sets the lock file's heartbeat `ageMs` into the past. */
function age(ms: number): void {
  const then = new Date(Date.now() - ms);
  utimesSync(lockPathOf(quotas), then, then);
}

describe('server lock', () => {
  it('claims a free quotas file and releases it, leaving no temporary files', () => {
    acquireServerLock(quotas, 9100);
    expect(lockOf()).toEqual(mine(9100));
    expect(readdirSync(dir)).toEqual(['quotas.json.lock']);
    releaseServerLock(quotas);
    expect(existsSync(lockPathOf(quotas))).toBe(false);
  });

  it('refuses a quotas file a live server holds, and leaves its lock alone', () => {
    const pid = otherLiveProcess();
    writeFileSync(lockPathOf(quotas), JSON.stringify({ pid, adminPort: 9200 }));
    expect(readServerLock(quotas)).toEqual({ pid, host: hostname(), adminPort: 9200, local: true });
    expect(() => acquireServerLock(quotas, null)).toThrow(StartupError);
    expect(() => acquireServerLock(quotas, null)).toThrow(
      `in use by another cascade server (pid ${pid})`,
    );
    expect(lockOf()).toEqual({ pid, adminPort: 9200 });
    expect(readdirSync(dir)).toEqual(['quotas.json.lock']);
  });

  it('takes over the lock of a server that died (kill -9) or a lock that is unreadable', () => {
    writeFileSync(lockPathOf(quotas), JSON.stringify({ pid: deadPid(), adminPort: 1 }));
    acquireServerLock(quotas, null);
    expect(lockOf()).toEqual(mine(null));

    writeFileSync(lockPathOf(quotas), '{"pid": 12');
    acquireServerLock(quotas, 5);
    expect(lockOf()).toEqual(mine(5));
    expect(readdirSync(dir).filter((f) => !f.includes('.takeover-'))).toEqual(['quotas.json.lock']);
  });

  it('refuses a live holder in another container, even one with our pid (both pid 1)', () => {
    const other = {
      pid: process.pid,
      host: 'container-b',
      bootId: BOOT_ID,
      startTime: '1',
      adminPort: 9100,
    };
    writeFileSync(lockPathOf(quotas), JSON.stringify(other));
    expect(() => acquireServerLock(quotas, null)).toThrow(
      `in use by another cascade server (pid ${process.pid} on host container-b)`,
    );
    // Its admin port is on its own loopback, not ours.
    expect(readServerLock(quotas)).toEqual({
      pid: process.pid,
      host: 'container-b',
      adminPort: null,
      local: false,
    });
    expect(lockOf()).toEqual(other);
  });

  it('takes over the lock of another container that stopped refreshing it (crashed)', () => {
    const other = { pid: 1, host: 'container-b', bootId: BOOT_ID, startTime: '1', adminPort: null };
    writeFileSync(lockPathOf(quotas), JSON.stringify(other));
    age(STALE_AFTER_MS + 5000);
    expect(readServerLock(quotas)).toBeUndefined();
    acquireServerLock(quotas, 7);
    expect(lockOf()).toEqual(mine(7));
  });

  it('loses to a server whose takeover of a stale lock is under way, its rename not landed yet', () => {
    const stale = JSON.stringify({
      pid: 1,
      host: 'container-b',
      bootId: BOOT_ID,
      startTime: '1',
      adminPort: null,
    });
    writeFileSync(lockPathOf(quotas), stale);
    age(STALE_AFTER_MS + 5000);
    // A live server has created the takeover token of this very lock version (named after its
    // inode, mtime and bytes) and was paused before its rename: under load, that pause is long.
    const pid = otherLiveProcess();
    const taker = {
      pid,
      host: hostname(),
      bootId: BOOT_ID,
      startTime: processStartTime(pid),
      adminPort: null,
    };
    const { ino, mtimeNs } = statSync(lockPathOf(quotas), { bigint: true });
    const digest = createHash('sha256').update(`${ino}-${mtimeNs}`).update(stale).digest('hex');
    writeFileSync(`${lockPathOf(quotas)}.takeover-${digest.slice(0, 24)}`, JSON.stringify(taker));
    expect(() => acquireServerLock(quotas, null)).toThrow(
      `in use by another cascade server (pid ${pid})`,
    );
    expect(readFileSync(lockPathOf(quotas), 'utf8')).toBe(stale);
  });

  it('takes over the lock of an earlier run of this container (same host and pid, older start)', () => {
    const earlier = { ...mine(null), startTime: '1' };
    writeFileSync(lockPathOf(quotas), JSON.stringify(earlier));
    expect(readServerLock(quotas)).toBeUndefined();
    acquireServerLock(quotas, null);
    expect(lockOf()).toEqual(mine(null));
  });

  it('takes over a lock written before the machine rebooted', () => {
    const pid = otherLiveProcess();
    writeFileSync(
      lockPathOf(quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: 'another-boot',
        startTime: '1',
        adminPort: null,
      }),
    );
    acquireServerLock(quotas, null);
    expect(lockOf()).toEqual(mine(null));
  });

  it('treats a live pid with another start time as a reused pid (stale)', () => {
    const pid = otherLiveProcess();
    const started = processStartTime(pid)!;
    writeFileSync(
      lockPathOf(quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: BOOT_ID,
        startTime: `${started}9`,
        adminPort: null,
      }),
    );
    expect(readServerLock(quotas)).toBeUndefined();
    writeFileSync(
      lockPathOf(quotas),
      JSON.stringify({
        pid,
        host: hostname(),
        bootId: BOOT_ID,
        startTime: started,
        adminPort: null,
      }),
    );
    expect(readServerLock(quotas)?.pid).toBe(pid);
  });

  it('refreshes its heartbeat while it holds the lock, and notices when it lost it', () => {
    acquireServerLock(quotas, null);
    age(30_000);
    const before = statSync(lockPathOf(quotas)).mtimeMs;
    expect(refreshServerLock(quotas)).toBe(true);
    expect(statSync(lockPathOf(quotas)).mtimeMs).toBeGreaterThan(before);
    writeFileSync(
      lockPathOf(quotas),
      JSON.stringify({ pid: 1, host: 'elsewhere', adminPort: null }),
    );
    expect(refreshServerLock(quotas)).toBe(false);
    releaseServerLock(quotas);
    expect(existsSync(lockPathOf(quotas))).toBe(true); // not ours: left alone
  });

  /** Six processes claim at once through the compiled module; their outcomes. */
  async function race(): Promise<string[]> {
    const compiled = new URL('../../../dist/core/quota/server-lock.js', import.meta.url).href;
    const go = join(dir, 'go');
    rmSync(go, { force: true });
    // Each contender loads the module, says 'ready', waits for the go file, claims. It looks
    // every millisecond, asleep in between: six busy loops would starve the rest of the suite
    // (servers under test in the other worker) on a two-core machine.
    const program = `
      import { existsSync } from 'node:fs';
      import { acquireServerLock } from ${JSON.stringify(compiled)};
      const nap = new Int32Array(new SharedArrayBuffer(4));
      process.stdout.write('ready;');
      while (!existsSync(${JSON.stringify(go)})) Atomics.wait(nap, 0, 0, 1);
      try { acquireServerLock(${JSON.stringify(quotas)}, null); process.stdout.write('won'); }
      catch (err) { process.stdout.write(String(err.message).includes('in use') ? 'lost' : 'error:' + err.message); }
      setTimeout(() => {}, 3000);`;
    const contenders = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', program], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    children.push(...contenders);
    const output = contenders.map(() => '');
    const settled = (text: string): boolean =>
      text.endsWith('won') || text.endsWith('lost') || text.includes('error:');
    await new Promise<void>((resolve) => {
      contenders.forEach((child, i) =>
        child.stdout.on('data', (chunk: Buffer) => {
          output[i] += chunk.toString();
          if (output.every((text) => text.startsWith('ready;'))) writeFileSync(go, '');
          if (output.every(settled)) resolve();
        }),
      );
    });
    for (const child of contenders) child.kill();
    return output.map((text) => text.slice('ready;'.length));
  }

  it.each([
    ['no lock', () => undefined],
    [
      'a dead server’s lock',
      () =>
        writeFileSync(
          lockPathOf(quotas),
          JSON.stringify({
            pid: deadPid(),
            host: hostname(),
            bootId: BOOT_ID,
            startTime: '1',
            adminPort: 3,
          }),
        ),
    ],
    ['an unreadable lock', () => writeFileSync(lockPathOf(quotas), '{"pid":')],
    [
      'a crashed container’s lock',
      () => {
        writeFileSync(
          lockPathOf(quotas),
          JSON.stringify({
            pid: 1,
            host: 'gone',
            bootId: BOOT_ID,
            startTime: '1',
            adminPort: null,
          }),
        );
        age(STALE_AFTER_MS * 2);
      },
    ],
  ])(
    'lets exactly one of six servers starting at once claim the file over %s, every time',
    async (_name, setUp) => {
      for (let round = 0; round < 4; round++) {
        rmSync(lockPathOf(quotas), { force: true });
        setUp();
        const outcomes = await race();
        expect(
          outcomes.filter((o) => o === 'won'),
          outcomes.join(' '),
        ).toHaveLength(1);
        expect(outcomes.filter((o) => o === 'lost')).toHaveLength(5);
      }
    },
    // 24 Node processes start per case: ~2 s on an idle machine, 10-15 s with the cores busy.
    // The timeout only catches a hang.
    90_000,
  );
});
