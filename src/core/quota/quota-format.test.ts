import { describe, expect, it } from 'vitest';
import { QuotaFileError } from '../errors.js';
import { QUOTA_FILE_HINT, formatQuotaFile, parseQuotaFile } from './quota-format.js';
import type { QuotaEntry } from './usage-ledger.js';

const snapshotOf = (entries: [string, QuotaEntry][]) => new Map(entries);

describe('formatQuotaFile', () => {
  it('writes the exact format the README documents', () => {
    const text = formatQuotaFile(snapshotOf([['helius', { used: 0, periodStart: '2026-08-15' }]]));
    expect(text).toBe('{\n  "helius": {\n    "used": 0,\n    "period_start": "2026-08-15"\n  }\n}');
  });

  it('sorts names by byte order, not locale, and numbers-like names stay in that order', () => {
    const names = ['b', 'B', 'a', 'A', '_x', '9', '10', 'é', 'z', 'Z-1', '😀', '\uffff'];
    const snapshot = snapshotOf(names.map((n) => [n, { used: 1, periodStart: '2026-08-01' }]));
    const text = formatQuotaFile(snapshot);
    const order = [...text.matchAll(/^ {2}"(.*)": \{$/gmu)].map((m) => m[1]);
    expect(order).toEqual(['10', '9', 'A', 'B', 'Z-1', '_x', 'a', 'b', 'z', 'é', '\uffff', '😀']);
    expect(text.endsWith('}')).toBe(true);
    expect(text.endsWith('\n')).toBe(false);
  });

  it('writes several entries exactly', () => {
    const text = formatQuotaFile(
      snapshotOf([
        ['triton', { used: 12, periodStart: '2026-07-31' }],
        ['Alchemy', { used: 9007199254740991, periodStart: '2026-08-01' }],
      ]),
    );
    expect(text).toBe(
      [
        '{',
        '  "Alchemy": {',
        '    "used": 9007199254740991,',
        '    "period_start": "2026-08-01"',
        '  },',
        '  "triton": {',
        '    "used": 12,',
        '    "period_start": "2026-07-31"',
        '  }',
        '}',
      ].join('\n'),
    );
  });

  it('writes an empty snapshot as {}', () => {
    expect(formatQuotaFile(new Map())).toBe('{}');
  });

  it('escapes names the JSON way', () => {
    const text = formatQuotaFile(snapshotOf([['a"b\\c', { used: 1, periodStart: '2026-08-01' }]]));
    expect(JSON.parse(text)).toEqual({ 'a"b\\c': { used: 1, period_start: '2026-08-01' } });
  });

  it.each([
    ['fractional usage', { used: 1.5, periodStart: '2026-08-01' }],
    ['negative usage', { used: -1, periodStart: '2026-08-01' }],
    ['unsafe usage', { used: 2 ** 53, periodStart: '2026-08-01' }],
    ['a bad day', { used: 1, periodStart: '2026-02-30' }],
  ])('refuses to write %s (the file would not load again)', (_case, entry) => {
    expect(() => formatQuotaFile(snapshotOf([['n', entry]]))).toThrow(RangeError);
  });
});

describe('parseQuotaFile', () => {
  it('round-trips what formatQuotaFile writes', () => {
    const snapshot = snapshotOf([
      ['helius', { used: 0, periodStart: '2026-08-15' }],
      ['10', { used: 1234567, periodStart: '2024-02-29' }],
      ['__proto__', { used: 3, periodStart: '2026-01-31' }],
      ['ünïcode', { used: 9007199254740991, periodStart: '2025-12-15' }],
    ]);
    const parsed = parseQuotaFile(formatQuotaFile(snapshot), 'quotas.json');
    expect(parsed).toEqual(snapshot);
    expect(formatQuotaFile(parsed)).toBe(formatQuotaFile(snapshot));
  });

  it('accepts compact JSON, an empty object and ignores extra fields', () => {
    expect(parseQuotaFile('{}', 'q.json')).toEqual(new Map());
    expect(
      parseQuotaFile('{"n":{"used":900,"period_start":"2020-01-01","note":"x"}}', 'q.json'),
    ).toEqual(snapshotOf([['n', { used: 900, periodStart: '2020-01-01' }]]));
  });

  const file = 'quotas.json';
  it.each([
    ['', 'quotas.json: is empty, expected a JSON object'],
    ['  \n', 'quotas.json: is empty, expected a JSON object'],
    ['[]', 'quotas.json: must be a JSON object keyed by node name, got an array'],
    ['null', 'quotas.json: must be a JSON object keyed by node name, got null'],
    ['"x"', 'quotas.json: must be a JSON object keyed by node name, got string "x"'],
    ['42', 'quotas.json: must be a JSON object keyed by node name, got number 42'],
    [
      '{"helius": 5}',
      'quotas.json: "helius" must be an object {"used": …, "period_start": …}, got number 5',
    ],
    [
      '{"helius": []}',
      'quotas.json: "helius" must be an object {"used": …, "period_start": …}, got an array',
    ],
    [
      '{"helius":{"used":"12","period_start":"2026-08-01"}}',
      'quotas.json: "helius".used must be a whole number ≥ 0, got "12"',
    ],
    [
      '{"helius":{"used":-1,"period_start":"2026-08-01"}}',
      'quotas.json: "helius".used must be a whole number ≥ 0, got -1',
    ],
    [
      '{"helius":{"used":1.5,"period_start":"2026-08-01"}}',
      'quotas.json: "helius".used must be a whole number ≥ 0, got 1.5',
    ],
    [
      '{"helius":{"used":null,"period_start":"2026-08-01"}}',
      'quotas.json: "helius".used must be a whole number ≥ 0, got null',
    ],
    [
      '{"helius":{"period_start":"2026-08-01"}}',
      'quotas.json: "helius".used must be a whole number ≥ 0, got nothing (the key is missing)',
    ],
    [
      '{"helius":{"used":18446744073709551615,"period_start":"2026-08-01"}}',
      'quotas.json: "helius".used is too large (at most 9007199254740991), got 18446744073709552000',
    ],
    [
      '{"helius":{"used":1,"period_start":"2026-02-30"}}',
      'quotas.json: "helius".period_start must be a calendar day "YYYY-MM-DD", got "2026-02-30"',
    ],
    [
      '{"helius":{"used":1,"period_start":"2026-8-1"}}',
      'quotas.json: "helius".period_start must be a calendar day "YYYY-MM-DD", got "2026-8-1"',
    ],
    [
      '{"helius":{"used":1,"period_start":20260801}}',
      'quotas.json: "helius".period_start must be a calendar day "YYYY-MM-DD", got 20260801',
    ],
    [
      '{"helius":{"used":1}}',
      'quotas.json: "helius".period_start must be a calendar day "YYYY-MM-DD", got nothing (the key is missing)',
    ],
    [
      '{"a":{"used":-1,"period_start":"x"},"b":7}',
      'quotas.json: "a".used must be a whole number ≥ 0, got -1 (and 2 more problems)',
    ],
  ])('%j ⇒ %s', (text, message) => {
    const err = catchError(() => parseQuotaFile(text, file));
    expect(err).toBeInstanceOf(QuotaFileError);
    expect(err.message).toBe(message);
    expect(err.hint).toBe(QUOTA_FILE_HINT);
    expect(err.code).toBe('QUOTA_FILE_INVALID');
  });

  it.each(['{"a":', '{"a":1,}', '{\n  "a": {\n    "used": 1,\n  }\n}', 'quotas', '{} x'])(
    'broken JSON %j ⇒ one line saying it is not valid JSON',
    (text) => {
      const err = catchError(() => parseQuotaFile(text, '/srv/cascade/quotas.json'));
      expect(err).toBeInstanceOf(QuotaFileError);
      expect(err.message).toMatch(/^\/srv\/cascade\/quotas\.json: is not valid JSON: \S/);
      expect(err.message).not.toContain('\n');
    },
  );

  it('says where broken JSON breaks as a line and column', () => {
    const err = catchError(() => parseQuotaFile('{\n  "a": {\n    "used": 1,\n  }\n}', file));
    expect(err.message).toMatch(/^quotas\.json: is not valid JSON: .* at line 4 column 3$/);
  });

  it('shortens a long bad value in the message', () => {
    const long = 'x'.repeat(500);
    const err = catchError(() =>
      parseQuotaFile(`{"n":{"used":"${long}","period_start":"2026-08-01"}}`, file),
    );
    expect(err.message.length).toBeLessThan(120);
    expect(err.message).toContain('...');
  });
});

function catchError(fn: () => unknown): QuotaFileError {
  try {
    fn();
  } catch (err) {
    return err as QuotaFileError;
  }
  throw new Error('expected an error');
}

describe('saved credits in quotas.json', () => {
  it('writes `saved` only when the cache saved something, and reads it back', () => {
    const entry = { used: 5, periodStart: '2026-08-01', saved: 1234 };
    const text = formatQuotaFile(
      snapshotOf([
        ['a', entry],
        ['b', { used: 1, periodStart: '2026-08-01' }],
      ]),
    );
    expect(text).toContain('"period_start": "2026-08-01",\n    "saved": 1234\n');
    expect(text.match(/saved/g)).toHaveLength(1);
    expect(parseQuotaFile(text, 'quotas.json').get('a')).toEqual(entry);
  });

  it('reads files without it (older versions) and refuses a bad value, naming it', () => {
    const old = '{"a": {"used": 3, "period_start": "2026-08-01"}}';
    expect(parseQuotaFile(old, 'q.json').get('a')).toEqual({ used: 3, periodStart: '2026-08-01' });
    expect(() =>
      parseQuotaFile('{"a": {"used": 3, "period_start": "2026-08-01", "saved": -1}}', 'q.json'),
    ).toThrow(/"a".saved must be a whole number ≥ 0, got -1/);
  });
});
