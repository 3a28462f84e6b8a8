/** The server lock under contention: several processes claiming one quotas file at once. */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BOOT_ID, deadPid, useLockDir } from '../../../test/support/lock-dir.js';
import { STALE_AFTER_MS, lockPathOf } from './server-lock.js';

const lock = useLockDir();

describe('server lock, contended', () => {
  /** Six processes claim at once through the compiled module; their outcomes. */
  async function race(): Promise<string[]> {
    const compiled = new URL('../../../dist/core/quota/server-lock.js', import.meta.url).href;
    const go = join(lock.dir, 'go');
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
      try { acquireServerLock(${JSON.stringify(lock.quotas)}, null); process.stdout.write('won'); }
      catch (err) { process.stdout.write(String(err.message).includes('in use') ? 'lost' : 'error:' + err.message); }
      setTimeout(() => {}, 3000);`;
    const contenders = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', program], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    lock.track(...contenders);
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
          lockPathOf(lock.quotas),
          JSON.stringify({
            pid: deadPid(),
            host: hostname(),
            bootId: BOOT_ID,
            startTime: '1',
            adminPort: 3,
          }),
        ),
    ],
    ['an unreadable lock', () => writeFileSync(lockPathOf(lock.quotas), '{"pid":')],
    [
      'a crashed container’s lock',
      () => {
        writeFileSync(
          lockPathOf(lock.quotas),
          JSON.stringify({
            pid: 1,
            host: 'gone',
            bootId: BOOT_ID,
            startTime: '1',
            adminPort: null,
          }),
        );
        lock.age(STALE_AFTER_MS * 2);
      },
    ],
  ])(
    'lets exactly one of six servers starting at once claim the file over %s, every time',
    async (_name, setUp) => {
      for (let round = 0; round < 4; round++) {
        rmSync(lockPathOf(lock.quotas), { force: true });
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
