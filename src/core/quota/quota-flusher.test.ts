import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QuotaFileError } from '../errors.js';
import { formatQuotaFile } from './quota-format.js';
import { QuotaFlusher } from './quota-flusher.js';
import type { QuotaFlusherOptions } from './quota-flusher.js';
import type { PeriodNode } from './rollover.js';
import { LocalUsageLedger } from './usage-ledger.js';
import type { QuotaEntry, QuotaSnapshot } from './usage-ledger.js';

/** A flusher over an in-memory "file" with a settable clock and node set. */
function harness(
  initial: Record<string, QuotaEntry> = {},
  options: Partial<QuotaFlusherOptions> = {},
) {
  const state = {
    today: new Date('2026-08-17T10:00:00Z'),
    nodes: [{ name: 'a', resetDay: 1 }] as PeriodNode[],
    writes: [] as string[],
    fail: undefined as Error | undefined,
  };
  const ledger = new LocalUsageLedger();
  const flusher = new QuotaFlusher({
    ledger,
    path: 'quotas.json',
    nodes: () => state.nodes,
    now: () => state.today,
    read: () => Promise.resolve(new Map(Object.entries(initial))),
    write: (_path, snapshot: QuotaSnapshot) => {
      if (state.fail !== undefined) return Promise.reject(state.fail);
      state.writes.push(formatQuotaFile(snapshot));
      return Promise.resolve();
    },
    ...options,
  });
  return { state, ledger, flusher };
}

describe('QuotaFlusher', () => {
  it('restore seeds configured nodes, reports strangers and rolls over', async () => {
    const { state, ledger, flusher } = harness({
      a: { used: 900, periodStart: '2020-01-01' },
      b: { used: 40, periodStart: '2026-08-01' },
      gone: { used: 5, periodStart: '2026-08-01' },
    });
    state.nodes = [
      { name: 'a', resetDay: 1 },
      { name: 'b', resetDay: 1 },
      { name: 'c', resetDay: 15 },
    ];
    const result = await flusher.restore();
    expect(result.seeded).toEqual(['a', 'b']);
    expect(result.ignored).toEqual(['gone']);
    expect(result.events.map((e) => [e.name, e.kind, e.usedBefore])).toEqual([
      ['a', 'reset', 900],
      ['c', 'adopted', 0],
    ]);
    expect(ledger.snapshot()).toEqual(
      new Map([
        ['a', { used: 0, periodStart: '2026-08-01' }],
        ['b', { used: 40, periodStart: '2026-08-01' }],
        ['c', { used: 0, periodStart: '2026-08-15' }],
      ]),
    );
    expect(state.writes).toEqual([]);
  });

  it('restore lets a corrupt file stop startup', async () => {
    const { flusher } = harness(
      {},
      { read: () => Promise.reject(new QuotaFileError('quotas.json: bad')) },
    );
    await expect(flusher.restore()).rejects.toBeInstanceOf(QuotaFileError);
  });

  it('tick rolls over at a boundary, then writes', async () => {
    const { state, ledger, flusher } = harness();
    await flusher.restore();
    ledger.counter('a').add(30);
    expect((await flusher.tick()).events).toEqual([]);
    state.today = new Date('2026-09-01T00:00:05Z');
    const { events, error } = await flusher.tick();
    expect(error).toBeUndefined();
    expect(events).toMatchObject([{ kind: 'reset', name: 'a', usedBefore: 30 }]);
    expect(state.writes.map((text) => JSON.parse(text) as unknown)).toEqual([
      { a: { used: 30, period_start: '2026-08-01' } },
      { a: { used: 0, period_start: '2026-09-01' } },
    ]);
  });

  it('tick reports a failed write instead of throwing, and the next tick writes again', async () => {
    const { state, flusher } = harness();
    await flusher.restore();
    state.fail = new Error('disk full');
    expect((await flusher.tick()).error?.message).toBe('disk full');
    state.fail = undefined;
    expect((await flusher.tick()).error).toBeUndefined();
    expect(state.writes).toHaveLength(1);
  });

  it('close writes without rolling over, and later ticks do nothing', async () => {
    const { state, ledger, flusher } = harness();
    await flusher.restore();
    ledger.counter('a').add(1);
    state.today = new Date('2026-10-02T00:00:00Z');
    await flusher.close();
    expect(state.writes).toEqual([formatQuotaFile(ledger.snapshot())]);
    expect(ledger.periodStart('a')).toBe('2026-08-01');
    expect(await flusher.tick()).toEqual({ events: [], error: undefined });
    expect(state.writes).toHaveLength(1);
  });

  it('close rejects when the final write fails', async () => {
    const { state, flusher } = harness();
    await flusher.restore();
    state.fail = new Error('read-only');
    await expect(flusher.close()).rejects.toThrow('read-only');
  });

  it('the final write lands after a slow tick write, with the latest usage', async () => {
    const order: number[] = [];
    let release = (): void => undefined;
    const { ledger, flusher } = harness(
      {},
      {
        write: (_path, snapshot) => {
          const used = snapshot.get('a')?.used ?? -1;
          if (order.length > 0) {
            order.push(used);
            return Promise.resolve();
          }
          order.push(used);
          return new Promise<void>((resolve) => (release = resolve));
        },
      },
    );
    await flusher.restore();
    ledger.counter('a').add(1);
    const tick = flusher.tick();
    for (let i = 0; i < 10 && order.length === 0; i++) await Promise.resolve();
    expect(order).toEqual([1]);
    ledger.counter('a').add(1);
    const close = flusher.close();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(order).toEqual([1]);
    release();
    await Promise.all([tick, close]);
    expect(order).toEqual([1, 2]);
  });

  it('applyNodeSet forgets removed nodes and gives new ones a marker at once', async () => {
    const { state, ledger, flusher } = harness({ a: { used: 10, periodStart: '2026-08-01' } });
    await flusher.restore();
    const a = ledger.counter('a');
    state.nodes = [
      { name: 'a', resetDay: 1 },
      { name: 'new', resetDay: 31 },
    ];
    ledger.counter('new').add(3);
    ledger.counter('gone').add(8);
    const change = flusher.applyNodeSet(state.nodes);
    expect(change.retired).toEqual([{ name: 'gone', used: 8, periodStart: undefined }]);
    expect(change.assigned).toEqual([{ name: 'new', periodStart: '2026-07-31' }]);
    expect(ledger.counter('a')).toBe(a);
    await flusher.close();
    expect(JSON.parse(state.writes[0]!)).toEqual({
      a: { used: 10, period_start: '2026-08-01' },
      new: { used: 3, period_start: '2026-07-31' },
    });
  });

  it('keeps aside what a kept name spent: written while gone, handed back when it returns', async () => {
    const { state, ledger, flusher } = harness({
      'key:web': { used: 20, periodStart: '2026-08-01' },
    });
    state.nodes = [{ name: 'key:web', resetDay: 1 }];
    await flusher.restore();
    const isKey = (name: string) => name.startsWith('key:');
    // Removed: retired from the ledger, but still in the file as it was.
    state.nodes = [];
    expect(flusher.applyNodeSet(state.nodes, isKey).retired).toEqual([
      { name: 'key:web', used: 20, periodStart: '2026-08-01' },
    ]);
    await flusher.tick();
    expect(JSON.parse(state.writes.at(-1)!)).toEqual({
      'key:web': { used: 20, period_start: '2026-08-01' },
    });
    // Put back in the same period: it carries on from 20, not from 0.
    state.nodes = [{ name: 'key:web', resetDay: 1 }];
    flusher.applyNodeSet(state.nodes, isKey);
    expect(ledger.counter('key:web').used).toBe(20);
    // A name not kept aside is forgotten, as before.
    ledger.counter('gone').add(5);
    flusher.applyNodeSet(state.nodes, isKey);
    await flusher.close();
    expect(Object.keys(JSON.parse(state.writes.at(-1)!) as object)).toEqual(['key:web']);
  });

  it('works end to end on a real file: restart across a boundary', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cascade-flusher-'));
    try {
      const path = join(dir, 'quotas.json');
      await writeFile(path, '{"n":{"used":900,"period_start":"2020-01-01"}}');
      const ledger = new LocalUsageLedger();
      const counter = ledger.counter('n');
      const flusher = new QuotaFlusher({
        ledger,
        path,
        nodes: () => [{ name: 'n', resetDay: 1 }],
        now: () => new Date('2026-08-17T00:00:00Z'),
      });
      const { events } = await flusher.restore();
      expect(events).toMatchObject([{ kind: 'reset', longGap: true }]);
      counter.add(1);
      await flusher.close();
      expect(await readFile(path, 'utf8')).toBe(
        '{\n  "n": {\n    "used": 1,\n    "period_start": "2026-08-01"\n  }\n}',
      );
      expect(await readdir(dir)).toEqual(['quotas.json']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
