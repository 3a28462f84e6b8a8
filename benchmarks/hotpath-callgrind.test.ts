import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missesOf, totalOf } from './hotpath-callgrind.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'callgrind-dump-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dump(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('reading a callgrind dump', () => {
  it('reads the cache misses of a dump taken with --cache-sim=yes, by event name', () => {
    const file = dump(
      'sim',
      [
        '# callgrind format',
        'events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw',
        'fn=(1) main',
        '0 10 4 2 1 1 0 0 0 0',
        'summary: 3124543253 891456069 471719256 155050366 64682562 8321065 607 2538 13443',
        'totals: 3126630272 893543088 471719256 155810887 65143406 8321065 680 2599 13443',
        '',
      ].join('\n'),
    );
    expect(totalOf(file)).toBe(3124543253);
    expect(missesOf(file)).toEqual({
      instruction: 155050366,
      dataRead: 64682562,
      dataWrite: 8321065,
    });
  });

  it('has no misses for a dump of instructions alone', () => {
    const file = dump(
      'plain',
      ['events: Ir', 'fn=(1) main', '0 10', 'summary: 2834578186', 'totals: 2834578186', ''].join(
        '\n',
      ),
    );
    expect(totalOf(file)).toBe(2834578186);
    expect(missesOf(file)).toBeUndefined();
  });
});
