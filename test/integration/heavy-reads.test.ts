/**
 * The refusals of heavy reads (issue 29), through every door — an HTTP request, an HTTP batch
 * element, a WebSocket request, a WebSocket batch element: an eth_getLogs range over the
 * operator's `max_logs_block_range`, a planned split no node's quota or the key's budget can
 * hold, a call without a filter its key requires, an answer bigger than its key may have. Each
 * names the rule that refused it; all but the answer-size cap are decided before any node is
 * asked (the mocks' stats), and a plan is priced whole before its first chunk is sent.
 */
import { describe, expect, it } from 'vitest';
import type { ClientKeyConfig } from '../../src/core/config/key-types.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { DOORS, openDoor, type DoorReply } from '../support/doors.js';
import type { WsTestNode } from '../support/ws-harness.js';
import { useWsHarness } from '../support/ws-harness.js';

const KEY = 'ck_heavy_0123456789abcdefghijklmnop';
const ws = useWsHarness();
const hex = (n: number): string => `0x${n.toString(16)}`;

function calls(method: string): number {
  return Object.values(ws.harness.mocks).reduce(
    (sum, mock) => sum + (mock.stats().byMethod[method] ?? 0),
    0,
  );
}

/** A range of `blocks` blocks the mocks' chain already has. */
async function range(blocks: number): Promise<{ fromBlock: string; toBlock: string }> {
  const mock = Object.values(ws.harness.mocks)[0]!;
  const head = await fetch(mock.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  const top = Number.parseInt(((await head.json()) as { result: string }).result, 16) - 10;
  return { fromBlock: hex(top - blocks + 1), toBlock: hex(top) };
}

/** Sends `method(params)` through `door` (with the key when `keyed`). */
async function through(
  door: (typeof DOORS)[number],
  method: string,
  params: unknown[],
  keyed = false,
): Promise<DoorReply> {
  const h = ws.harness;
  const at = keyed
    ? { url: `${h.url}/${KEY}`, wsUrl: `${h.wsUrl}/${KEY}` }
    : { url: h.url, wsUrl: h.wsUrl };
  const opened = await openDoor(door, at);
  try {
    return await opened.send({ method, params, id: 9 });
  } finally {
    opened.close();
  }
}

const LOGS_NODE = (extra: Partial<WsTestNode> = {}): WsTestNode => ({
  name: 'a',
  tier: 0,
  prices: { eth_getLogs: 10 },
  maxLogsBlockRange: 100,
  ...extra,
});

describe('eth_getLogs refusals, decided before any chunk is sent', () => {
  it.each(DOORS)('refuses a range over max_logs_block_range, naming it (%s)', async (door) => {
    await ws.start([LOGS_NODE()], { server: { chain: chainWith(5000) } });
    const reply = await through(door, 'eth_getLogs', [await range(30_000)]);
    expect(reply.answer.error.code).toBe(-32602);
    expect(reply.answer.error.message).toContain('30,000 blocks');
    expect(reply.answer.error.message).toContain('limit of 5,000 blocks (max_logs_block_range)');
    if (door === 'http') expect(reply.status).toBe(400);
    expect(calls('eth_getLogs')).toBe(0);
    // Within the limit it is served (and split for the node: 100 blocks per query).
    const served = await through(door, 'eth_getLogs', [await range(500)]);
    expect(served.answer.result).toHaveLength(500);
    expect(calls('eth_getLogs')).toBe(5);
  });

  it.each(DOORS)('refuses a split no quota holds, naming the plan (%s)', async (door) => {
    await ws.start([
      LOGS_NODE({ monthlyLimit: 200 }),
      LOGS_NODE({ name: 'b', tier: 1, monthlyLimit: 200 }),
    ]);
    const reply = await through(door, 'eth_getLogs', [await range(3000)]);
    expect(reply.answer.error.code).toBe(-32005);
    // 190 before spillover, less the batch doors' filler element (1 credit on node a).
    expect(reply.answer.error.message).toMatch(
      /needs 30 queries of at most 100 blocks on node a, 300 credits; its quota has 1(90|89) credits left before spillover \(monthly_limit\)/,
    );
    expect(calls('eth_getLogs')).toBe(0);
    // Nothing booked but the batch doors' filler element (1 credit).
    const filler = door.includes('batch') ? 1 : 0;
    expect(ws.harness.cascade.server.topology.node('a')!.usage.used).toBe(filler);
  });

  it('plans on the first node whose quota holds the whole split', async () => {
    await ws.start([
      LOGS_NODE({ monthlyLimit: 200 }),
      LOGS_NODE({ name: 'b', tier: 1, monthlyLimit: 10_000 }),
    ]);
    const reply = await through('http', 'eth_getLogs', [await range(3000)]);
    expect(reply.answer.result).toHaveLength(3000);
    expect(ws.harness.mocks.a!.stats().byMethod.eth_getLogs ?? 0).toBe(0);
    expect(ws.harness.mocks.b!.stats().byMethod.eth_getLogs).toBe(30);
  });

  it.each(DOORS)("refuses a split the key's budget cannot hold (%s)", async (door) => {
    await ws.start([LOGS_NODE()], { keys: keysOf(key({ monthlyCredits: 100 })) });
    const reply = await through(door, 'eth_getLogs', [await range(3000)], true);
    expect(reply.answer.error.code).toBe(-32005);
    expect(reply.answer.error.message).toContain('300 credits');
    // 100 left, less the batch doors' filler element in flight (1 credit).
    expect(reply.answer.error.message).toMatch(
      /key 'heavy' has (100|99) of its 100 credits left \(keys\.monthly_credits\)/,
    );
    expect(calls('eth_getLogs')).toBe(0);
    const keyState = ws.harness.cascade.server.keys.byName('heavy')!;
    expect(keyState.used).toBe(door.includes('batch') ? 1 : 0);
  });

  it('books a split to the key it fits: its chunks, once settled', async () => {
    await ws.start([LOGS_NODE()], { keys: keysOf(key({ monthlyCredits: 1000 })) });
    const reply = await through('ws', 'eth_getLogs', [await range(3000)], true);
    expect(reply.answer.result).toHaveLength(3000);
    expect(ws.harness.cascade.server.keys.byName('heavy')!.used).toBe(300);
  });
});

describe('guards of heavy reads per key', () => {
  const guarded = (): ClientKeyConfig =>
    key({
      requiredFilters: {
        eth_getLogs: ['address', 'topics'],
        getProgramAccounts: ['dataSize', 'memcmp'],
      },
    });

  it.each(DOORS)(
    'refuses eth_getLogs without an address or topics, naming the rule (%s)',
    async (door) => {
      await ws.start([{ name: 'a', prices: { eth_getLogs: 10 } }], { keys: keysOf(guarded()) });
      const bare = await range(10);
      for (const filter of [bare, { ...bare, topics: [null, null] }, { ...bare, address: [] }]) {
        const reply = await through(door, 'eth_getLogs', [filter], true);
        expect(reply.answer.error.code).toBe(-32001);
        expect(reply.answer.error.message).toContain(
          'only with one of the filters address, topics (keys.required_filters.eth_getLogs)',
        );
      }
      expect(calls('eth_getLogs')).toBe(0);
      const address = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
      const served = await through(door, 'eth_getLogs', [{ ...bare, address }], true);
      expect(served.answer.error).toBeUndefined();
      expect(calls('eth_getLogs')).toBe(1);
    },
  );

  it.each(DOORS)('refuses getProgramAccounts without a required filter (%s)', async (door) => {
    await ws.start([{ name: 'a' }], { keys: keysOf(guarded()) });
    const program = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
    const bare = await through(door, 'getProgramAccounts', [program, { encoding: 'base64' }], true);
    expect(bare.answer.error.message).toContain('keys.required_filters.getProgramAccounts');
    expect(calls('getProgramAccounts')).toBe(0);
    const filtered = [program, { encoding: 'base64', filters: [{ dataSize: 165 }] }];
    const served = await through(door, 'getProgramAccounts', filtered, true);
    expect(served.answer.error).toBeUndefined();
    expect(calls('getProgramAccounts')).toBe(1);
  });

  it.each(DOORS)(
    'refuses an answer over max_answer_bytes, naming it, streamed or not (%s)',
    async (door) => {
      await ws.start([{ name: 'a', mock: { responseBytes: 200_000 } }], {
        keys: keysOf(
          key({ maxAnswerBytes: 100_000 }),
          clientKey('roomy', `${KEY}x`, { maxAnswerBytes: 1_000_000 }),
        ),
      });
      const reply = await through(
        door,
        'getProgramAccounts',
        ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
        true,
      );
      expect(reply.answer.result).toBeUndefined();
      expect(reply.answer.error.message).toContain(
        "exceeds the 100,000-byte limit of key 'heavy' (keys.max_answer_bytes)",
      );
      if (door === 'http') expect(reply.status).toBe(413);
      // A key that may have it gets it whole.
      const h = ws.harness;
      const roomy = await openDoor(door, { url: `${h.url}/${KEY}x`, wsUrl: `${h.wsUrl}/${KEY}x` });
      try {
        const whole = await roomy.send({
          method: 'getProgramAccounts',
          params: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
          id: 3,
        });
        expect(Array.isArray(whole.answer.result)).toBe(true);
      } finally {
        roomy.close();
      }
    },
  );
});

describe('the access log of key refusals', () => {
  it('names the node asked, and what the client got, for a refusal before and after routing', async () => {
    await ws.start([{ name: 'a', prices: { getSlot: 2 }, mock: { responseBytes: 5_000 } }], {
      keys: keysOf(
        key({ maxAnswerBytes: 1_000 }),
        clientKey('budgeted', `${KEY}x`, { monthlyCredits: 2 }),
      ),
      accessLog: true,
    });
    const h = ws.harness;
    const post = (method: string, secret = KEY) =>
      fetch(`${h.url}/${secret}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: ['Prog1111'] }),
      }).then((response) => response.status);
    expect(await post('getProgramAccounts')).toBe(413);
    expect(await post('getSlot', `${KEY}x`)).toBe(200);
    expect(await post('getSlot', `${KEY}x`)).toBe(429);
    const lines = h.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({
        method: 'getProgramAccounts',
        node: 'a',
        status: 413,
        attempts: 1,
        credits: 1,
        key: 'heavy',
        error: expect.stringContaining('keys.max_answer_bytes'),
      }),
      expect.objectContaining({ method: 'getSlot', node: 'a', status: 200, credits: 2 }),
      expect.objectContaining({
        method: 'getSlot',
        node: null,
        status: 429,
        attempts: 0,
        credits: 0,
        key: 'budgeted',
        error: expect.stringContaining("Key 'budgeted'"),
      }),
    ]);
  });
});

function key(overrides: Partial<ClientKeyConfig>): ClientKeyConfig {
  return clientKey('heavy', KEY, overrides);
}

function chainWith(maxLogsBlockRange: number) {
  return {
    maxLag: [50, 4] as const,
    headMaxAgeSeconds: 60,
    headSamplePercent: 2,
    maxLogsBlockRange,
  };
}
