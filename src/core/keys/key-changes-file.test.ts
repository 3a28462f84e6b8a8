import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  formatKeyChanges,
  keyChangesPath,
  parseKeyChanges,
  readKeyChanges,
  writeKeyChanges,
} from './key-changes-file.js';
import type { SavedOverride } from './key-overrides.js';

const REVOKE = 'revoke:web:0123456789abcdef';
const SAVED: SavedOverride[] = [
  { field: 'budget:web', value: '750000@-', version: 1765150000000, pending: true },
  { field: REVOKE, value: '1', version: 1765150000123, pending: false },
];

describe('the key changes file', () => {
  it('sits beside quotas.json', () => {
    expect(keyChangesPath('/var/lib/cascade/quotas.json')).toBe(
      '/var/lib/cascade/quotas.key-changes.json',
    );
    expect(keyChangesPath('usage')).toBe('usage.key-changes.json');
  });

  it('reads back what it writes', () => {
    const text = formatKeyChanges(SAVED);
    expect(text).toBe(
      '{\n' +
        '  "budget:web": { "value": "750000@-", "version": 1765150000000, "pending": true },\n' +
        '  "revoke:web:0123456789abcdef": { "value": "1", "version": 1765150000123 }\n' +
        '}',
    );
    expect(parseKeyChanges(text, 'f.json')).toEqual(SAVED);
    expect(formatKeyChanges([])).toBe('{}');
    expect(parseKeyChanges('\uFEFF{}', 'f.json')).toEqual([]);
  });

  it.each([
    ['', 'f.json is not valid JSON'],
    ['[]', 'f.json must be a JSON object of runtime key changes'],
    ['{"revoke:web": {"value": "1", "version": 0}}', '"revoke:web" is not a change cascade makes'],
    ['{"budget:web": 5}', '"budget:web" must be an object'],
    [
      `{"${REVOKE}": {"value": "yes", "version": 0}}`,
      `"${REVOKE}".value must be "1" (revoked) or "0", got "yes"`,
    ],
    [
      '{"budget:web": {"value": "lots", "version": 0}}',
      '"budget:web".value must be "CREDITS@BASE" or "-" (whole numbers up to 2^53 − 1; BASE "-" for none), got "lots"',
    ],
    ['{"budget:web": {"value": "9999999999999999@-", "version": 0}}', 'got "9999999999999999@-"'],
    [
      `{"${REVOKE}": {"value": "1", "version": 0, "at": "now"}}`,
      `"${REVOKE}".at must be a time in ms (a whole number ≥ 0), got "now"`,
    ],
    [
      `{"${REVOKE}": {"value": "1", "version": -1}}`,
      `"${REVOKE}".version must be a whole number ≥ 0, got -1`,
    ],
    [
      `{"${REVOKE}": {"value": "1", "version": 1, "pending": "no"}}`,
      `"${REVOKE}".pending must be true or false, got "no"`,
    ],
  ])('refuses %j, naming the file and the problem', (text, problem) => {
    expect(() => parseKeyChanges(text, 'f.json')).toThrow(problem);
  });

  it('is replaced whole, with no temp file left; a missing file holds nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cascade-key-changes-'));
    const file = join(dir, 'quotas.key-changes.json');
    expect(await readKeyChanges(file)).toEqual([]);
    writeFileSync(file, '{}');
    await writeKeyChanges(file, formatKeyChanges(SAVED));
    expect(readFileSync(file, 'utf8')).toBe(formatKeyChanges(SAVED));
    expect(await readKeyChanges(file)).toEqual(SAVED);
    expect(readdirSync(dir)).toEqual(['quotas.key-changes.json']);
    await expect(writeKeyChanges(join(dir, 'missing', 'f.json'), '{}')).rejects.toThrow(
      /cannot write .*f\.json: ENOENT/,
    );
  });
});
