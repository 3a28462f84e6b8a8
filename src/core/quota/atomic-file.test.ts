import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleTemps, replaceFileAtomically } from './atomic-file.js';

describe('atomic file replacement', () => {
  it('leaves only the new file; temp files a killed writer left are removed by the owner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cascade-atomic-'));
    const file = join(dir, 'quotas.json');
    await replaceFileAtomically(file, '{}');
    expect(readdirSync(dir)).toEqual(['quotas.json']);
    const stale = '.quotas.json.999999.a1b2c3d4e5f6.tmp';
    const mine = `.quotas.json.${process.pid}.0a0b0c0d0e0f.tmp`;
    for (const name of [stale, mine, '.other.json.999999.a1b2c3d4e5f6.tmp', 'notes.tmp'])
      writeFileSync(join(dir, name), 'x');
    expect(await removeStaleTemps(file)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(
      ['.other.json.999999.a1b2c3d4e5f6.tmp', mine, 'notes.tmp', 'quotas.json'].sort(),
    );
    expect(await removeStaleTemps(join(dir, 'missing', 'quotas.json'))).toBe(0);
  });
});
