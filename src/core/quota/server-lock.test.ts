import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StartupError } from '../errors.js';
import { acquireServerLock, lockPathOf, readServerLock, releaseServerLock } from './server-lock.js';

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

const lockOf = (): unknown => JSON.parse(readFileSync(lockPathOf(quotas), 'utf8'));

describe('server lock', () => {
  it('claims a free quotas file and releases it, leaving no temporary files', () => {
    acquireServerLock(quotas, 9100);
    expect(lockOf()).toEqual({ pid: process.pid, adminPort: 9100 });
    expect(readdirSync(dir)).toEqual(['quotas.json.lock']);
    releaseServerLock(quotas);
    expect(existsSync(lockPathOf(quotas))).toBe(false);
  });

  it('refuses a quotas file a live server holds, and leaves its lock alone', () => {
    const pid = otherLiveProcess();
    writeFileSync(lockPathOf(quotas), JSON.stringify({ pid, adminPort: 9200 }));
    expect(readServerLock(quotas)).toEqual({ pid, adminPort: 9200 });
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
    expect(lockOf()).toEqual({ pid: process.pid, adminPort: null });

    writeFileSync(lockPathOf(quotas), '{"pid": 12');
    acquireServerLock(quotas, 5);
    expect(lockOf()).toEqual({ pid: process.pid, adminPort: 5 });
    expect(readdirSync(dir)).toEqual(['quotas.json.lock']);
  });

  it('lets exactly one of several servers starting at once claim the file', async () => {
    // Six processes race through the compiled module (npm test builds before testing).
    const compiled = new URL('../../../dist/core/quota/server-lock.js', import.meta.url).href;
    const go = join(dir, 'go');
    // Each contender loads the module, says 'ready', spins until the go file appears, claims.
    const program = `
      import { existsSync } from 'node:fs';
      import { acquireServerLock } from ${JSON.stringify(compiled)};
      process.stdout.write('ready;');
      while (!existsSync(${JSON.stringify(go)})) {}
      try { acquireServerLock(${JSON.stringify(quotas)}, null); process.stdout.write('won'); }
      catch { process.stdout.write('lost'); }
      setTimeout(() => {}, 2000);`;
    const contenders = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', program], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    children.push(...contenders);
    const output = contenders.map(() => '');
    const settled = (text: string): boolean => text.endsWith('won') || text.endsWith('lost');
    await new Promise<void>((resolve) => {
      contenders.forEach((child, i) =>
        child.stdout.on('data', (chunk: Buffer) => {
          output[i] += chunk.toString();
          if (output.every((text) => text.startsWith('ready;'))) writeFileSync(go, '');
          if (output.every(settled)) resolve();
        }),
      );
    });
    const outcomes = output.map((text) => text.slice('ready;'.length));
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'lost')).toHaveLength(5);
  });
});
