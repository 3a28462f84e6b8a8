/**
 * A key's budget survives a restart (issue 27): its usage is written to quotas.json beside the
 * nodes' (atomically, by the same flusher) and read back, so the call that would pass the
 * budget is refused by the next process too. A file of an older version (nodes only) reads
 * unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { useTempDir } from '../support/temp-dir.js';
import { startWsHarness, type WsHarness } from '../support/ws-harness.js';

const KEY = 'ck_alpha_0123456789abcdefghijklmnop';
const temp = useTempDir('cascade-key-usage-');

async function start(quotasPath: string, budget: number): Promise<WsHarness> {
  return startWsHarness([{ name: 'a', prices: { getSlot: 2 } }], {
    keys: keysOf(clientKey('alpha', KEY, { monthlyCredits: budget })),
    server: { requireKey: true },
    clock: new ManualClock(),
    quotasPath,
  });
}

async function getSlot(harness: WsHarness): Promise<number> {
  const response = await fetch(`${harness.url}/${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  });
  await response.arrayBuffer();
  return response.status;
}

describe("a key's usage in quotas.json", () => {
  it('refuses the call that would pass the budget after a restart', async () => {
    const quotasPath = temp.path('quotas.json');
    const first = await start(quotasPath, 5);
    expect(await getSlot(first)).toBe(200);
    expect(await getSlot(first)).toBe(200);
    await first.close();
    const saved = JSON.parse(readFileSync(quotasPath, 'utf8')) as Record<string, { used: number }>;
    expect(saved['key:alpha']?.used).toBe(4);
    expect(saved.a?.used).toBe(4);
    expect(readFileSync(quotasPath, 'utf8')).not.toContain(KEY);

    const second = await start(quotasPath, 5);
    try {
      expect(await getSlot(second)).toBe(429);
      expect(second.mocks.a!.stats().byMethod).toEqual({});
    } finally {
      await second.close();
    }
    // A bigger budget after the restart: the saved usage still counts against it.
    const third = await start(quotasPath, 6);
    try {
      expect(await getSlot(third)).toBe(200);
      expect(await getSlot(third)).toBe(429);
    } finally {
      await third.close();
    }
  });

  it('reads a file of nodes only unchanged, and keys start at 0', async () => {
    const quotasPath = temp.path('old.json');
    const today = new Date().toISOString().slice(0, 10);
    const start1 = `${today.slice(0, 8)}01`;
    writeFileSync(quotasPath, JSON.stringify({ a: { used: 7, period_start: start1 } }));
    const harness = await start(quotasPath, 5);
    try {
      expect(harness.cascade.server.topology.table.all[0]!.usage.used).toBe(7);
      expect(harness.cascade.server.keys.byName('alpha')!.used).toBe(0);
      expect(await getSlot(harness)).toBe(200);
    } finally {
      await harness.close();
    }
  });
});
