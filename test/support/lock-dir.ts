/**
 * A fresh folder with a quotas path for each server-lock test, plus the processes and lock
 * files those tests set up. Registers its own beforeEach/afterEach.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { lockPathOf, processStartTime } from '../../src/core/quota/server-lock.js';

/** This boot of the kernel, as a lock names it. */
export const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** The pid of a process that has exited. */
export function deadPid(): number {
  const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(run.stdout);
}

/** The lock this process writes (its identity, as other processes see it). */
export const mine = (adminPort: number | null) => ({
  pid: process.pid,
  host: hostname(),
  bootId: BOOT_ID,
  startTime: processStartTime(process.pid),
  adminPort,
});

/** Per-test folder and quotas path, and children killed after each test. */
export function useLockDir() {
  let dir = '';
  let quotas = '';
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cascade-lock-'));
    quotas = join(dir, 'quotas.json');
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get quotas() {
      return quotas;
    },
    /** Kills `child` after the test. */
    track(...more: ChildProcess[]): void {
      children.push(...more);
    },
    /** A live process that is not this one. */
    otherLiveProcess(): number {
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], {
        stdio: 'ignore',
      });
      children.push(child);
      return child.pid!;
    },
    /** The lock file's content. */
    lockOf(): Record<string, unknown> {
      return JSON.parse(readFileSync(lockPathOf(quotas), 'utf8')) as Record<string, unknown>;
    },
    /** Sets the lock file's heartbeat `ms` into the past. */
    age(ms: number): void {
      const then = new Date(Date.now() - ms);
      utimesSync(lockPathOf(quotas), then, then);
    },
  };
}
