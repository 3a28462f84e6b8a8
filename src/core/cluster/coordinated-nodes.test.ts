/**
 * A provider account's billing period is its own (issue 28): its pool rolls over on the
 * account's `reset_day`, not on its nodes', both where one process keeps usage (QuotaFlusher:
 * startup and every flush) and where workers and replicas share it (coordinatedNodes: every
 * sync, which also names the Redis key of the period).
 */
import { describe, expect, it } from 'vitest';
import { accountEntries } from '../config/config-chains.js';
import type { AccountConfig } from '../config/types.js';
import { QuotaFlusher } from '../quota/quota-flusher.js';
import type { QuotaSnapshot } from '../quota/usage-ledger.js';
import { LocalUsageLedger } from '../quota/usage-ledger.js';
import { coordinatedNodes } from './coordinated-nodes.js';

const ACCOUNT: AccountConfig = {
  name: 'shared',
  monthlyLimit: 100,
  resetDay: 15,
  rpsLimit: 20,
  maxConcurrent: 4,
  spilloverPercent: 100,
  spilloverThreshold: 100,
};
/** A node billed to the account, resetting on the 1st. */
const NODE = {
  name: 'sol-prem',
  resetDay: 1,
  spilloverThreshold: Infinity,
  rpsLimit: Infinity,
  maxConcurrent: 8,
};
const metered = () => [NODE, ...accountEntries({ accounts: [ACCOUNT] })];

/** A flusher over an in-memory quotas.json whose UTC day the test sets. */
function flusherAt(file: QuotaSnapshot): {
  ledger: LocalUsageLedger;
  flusher: QuotaFlusher;
  day: { now: string };
  written: () => QuotaSnapshot;
} {
  const ledger = new LocalUsageLedger();
  const day = { now: '2026-08-14T23:59:59Z' };
  let last: QuotaSnapshot = new Map();
  const flusher = new QuotaFlusher({
    ledger,
    path: '/unused/quotas.json',
    nodes: metered,
    now: () => new Date(day.now),
    read: () => Promise.resolve(file),
    write: (_path, snapshot) => {
      last = snapshot;
      return Promise.resolve();
    },
  });
  return { ledger, flusher, day, written: () => last };
}

describe('a provider account with its own reset_day', () => {
  it('is metered as account:NAME with the account’s day, threshold and limits', () => {
    expect(accountEntries({ accounts: [ACCOUNT] })).toEqual([
      {
        name: 'account:shared',
        resetDay: 15,
        spilloverThreshold: 100,
        rpsLimit: 20,
        maxConcurrent: 4,
      },
    ]);
    expect(accountEntries({})).toEqual([]);
  });

  it('rolls over on its own day in quotas.json while its node keeps its period', async () => {
    const { ledger, flusher, day, written } = flusherAt(
      new Map([
        ['sol-prem', { used: 70, periodStart: '2026-08-01' }],
        ['account:shared', { used: 101, periodStart: '2026-07-15' }],
      ]),
    );
    expect((await flusher.restore()).events).toEqual([]);
    // The 14th: neither period is over.
    expect((await flusher.tick()).events).toEqual([]);
    expect(ledger.counter('account:shared').used).toBe(101);
    // The 15th: the account's period ends, the node's (from the 1st) does not.
    day.now = '2026-08-15T00:00:01Z';
    const { events } = await flusher.tick();
    expect(events).toMatchObject([
      { kind: 'reset', name: 'account:shared', from: '2026-07-15', to: '2026-08-15' },
    ]);
    expect(written().get('account:shared')).toEqual({ used: 0, periodStart: '2026-08-15' });
    expect(written().get('sol-prem')).toEqual({ used: 70, periodStart: '2026-08-01' });
    // The 1st of the next month: the node's turn; the account's period runs to the 15th.
    ledger.counter('account:shared').add(5);
    day.now = '2026-09-01T00:00:00Z';
    expect((await flusher.tick()).events).toMatchObject([
      { kind: 'reset', name: 'sol-prem', from: '2026-08-01', to: '2026-09-01' },
    ]);
    expect(written().get('account:shared')).toEqual({ used: 5, periodStart: '2026-08-15' });
    expect(written().get('sol-prem')).toEqual({ used: 0, periodStart: '2026-09-01' });
  });

  it('rolls over at a restart across its day (the pool read from the file)', async () => {
    const { ledger, flusher, day } = flusherAt(
      new Map([
        ['sol-prem', { used: 70, periodStart: '2026-08-01' }],
        ['account:shared', { used: 101, periodStart: '2026-07-15' }],
      ]),
    );
    day.now = '2026-08-20T08:00:00Z';
    const { events } = await flusher.restore();
    expect(events).toMatchObject([{ kind: 'reset', name: 'account:shared', to: '2026-08-15' }]);
    expect(ledger.counter('account:shared').used).toBe(0);
    expect(ledger.counter('sol-prem').used).toBe(70);
  });

  it('switches workers and replicas to its new period key on its own day', () => {
    const ledger = new LocalUsageLedger();
    const seen: string[] = [];
    const sync = (at: string) =>
      coordinatedNodes(metered(), ledger, Date.parse(at), (events) =>
        seen.push(...events.map((event) => `${event.kind} ${event.name} ${event.to}`)),
      );
    const before = sync('2026-08-14T23:59:59Z');
    expect(before.map((node) => [node.name, node.period])).toEqual([
      ['sol-prem', '2026-08-01'],
      ['account:shared', '2026-07-15'],
    ]);
    // The account's limits are split between workers and replicas like a node's.
    expect(before[1]).toMatchObject({ rpsLimit: 20, concurrentLimit: 4 });
    ledger.counter('account:shared').add(9);
    ledger.counter('sol-prem').add(9);
    const after = sync('2026-08-15T00:00:01Z');
    expect(after.map((node) => [node.name, node.period])).toEqual([
      ['sol-prem', '2026-08-01'],
      ['account:shared', '2026-08-15'],
    ]);
    expect(seen).toEqual([
      'adopted sol-prem 2026-08-01',
      'adopted account:shared 2026-07-15',
      'reset account:shared 2026-08-15',
    ]);
    expect(ledger.counter('account:shared').used).toBe(0);
    expect(ledger.counter('sol-prem').used).toBe(9);
  });
});
