/**
 * eth_getLogs range planning at its edges, against a real EVM node (issue 29; README "Heavy
 * reads"): anvil (about 300 blocks, logs every 10) behind providers that refuse wide ranges in
 * Alchemy's words (test/support/logs-limit-proxy.ts), through cascade:
 *
 * - a range past the chain's head is planned only up to the head (anvil errors for a query
 *   that starts past its head: "BlockOutOfRangeError"), and is answered as anvil answers it
 *   asked once; one that starts past the head goes on as written, once;
 * - every spelling of a block number anvil reads (`0X`, leading zeros, 14+ digits) is judged
 *   against `max_logs_block_range`; text that is not a block number goes on to the node;
 * - a node known to refuse a range is not sent it when its quota cannot hold the split.
 *
 * Skips, saying why, where anvil cannot run.
 */
import { describe, expect, it } from 'vitest';
import { anvilUnavailable } from '../support/anvil.js';
import { useLoggedAnvil } from '../support/anvil-logs.js';
import { startLogsLimitProxy, type LogsLimitProxy } from '../support/logs-limit-proxy.js';
import { startLogsStage } from '../support/logs-stage.js';

const unavailable = anvilUnavailable();
const LIMIT = 50;
const hex = (n: number): string => `0x${n.toString(16)}`;

const logged = useLoggedAnvil(unavailable, [], 300, 10);

/** What anvil itself answers `filter`: its result, or its error. */
async function direct(filter: Record<string, unknown>): Promise<unknown> {
  const response = await fetch(logged.anvil!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] }),
  });
  return response.json();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function getLogs(filter: Record<string, unknown>): Promise<{ status: number; json: any }> {
  return logged.stage!.post({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] });
}

/** Traffic that shows cascade the chain's head (a client's eth_blockNumber), as a live one has. */
async function showHead(): Promise<void> {
  const reply = await logged.stage!.post({
    jsonrpc: '2.0',
    id: 0,
    method: 'eth_blockNumber',
    params: [],
  });
  expect(reply.json.result).toBe(hex(logged.chain.head));
}

/** One node in front of anvil refusing ranges over LIMIT blocks, its limit known to cascade. */
async function limitedStage(
  extra: { monthlyLimit?: number; maxLogsBlockRange?: number } = {},
): Promise<LogsLimitProxy> {
  const proxy = await startLogsLimitProxy(logged.anvil!.url, { shape: 'alchemy', limit: LIMIT });
  logged.stage = await startLogsStage(
    [
      {
        name: 'alchemy',
        url: proxy.url,
        maxLogsBlockRange: LIMIT,
        prices: { eth_getLogs: 10 },
        ...(extra.monthlyLimit === undefined ? {} : { monthlyLimit: extra.monthlyLimit }),
      },
    ],
    {
      server:
        extra.maxLogsBlockRange === undefined
          ? {}
          : {
              chain: {
                maxLag: [50, 4],
                headMaxAgeSeconds: 60,
                headSamplePercent: 2,
                maxLogsBlockRange: extra.maxLogsBlockRange,
              },
            },
    },
  );
  return proxy;
}

describe.skipIf(unavailable !== undefined)(`eth_getLogs past the head ${unavailable ?? ''}`, () => {
  it('answers a range reaching past the head as anvil does: the logs up to its head', async () => {
    const proxy = await limitedStage();
    await showHead();
    const filter = { fromBlock: '0x0', toBlock: hex(logged.chain.head + 700) };
    const own = (await direct(filter)) as { result: unknown[] };
    // anvil asked the whole range at once answers up to its head.
    expect(own.result.length).toBe(logged.chain.logBlocks.length * 2);
    const reply = await getLogs(filter);
    expect(reply.json.error).toBeUndefined();
    expect(reply.json.result).toEqual(own.result);
    // No chunk starts past the head; the chunks up to it cover it once.
    expect(proxy.asked.every(([from]) => from <= logged.chain.head)).toBe(true);
    expect(proxy.refused).toEqual([]);
    expect(
      proxy.asked
        .map(([, to]) => to)
        .sort((a, b) => a - b)
        .at(-1),
    ).toBe(logged.chain.head);
    expect(proxy.asked).toHaveLength(Math.ceil((logged.chain.head + 1) / LIMIT));
  });

  it("keeps the client's toBlock on the last chunk when the node takes it whole", async () => {
    const proxy = await limitedStage();
    await showHead();
    // 60 blocks up to the head (two chunks of 30), 10 past it.
    const filter = { fromBlock: hex(logged.chain.head - 59), toBlock: hex(logged.chain.head + 10) };
    const own = (await direct(filter)) as { result: unknown[] };
    const reply = await getLogs(filter);
    expect(reply.json.result).toEqual(own.result);
    expect([...proxy.asked].sort((a, b) => a[0] - b[0])).toEqual([
      [logged.chain.head - 59, logged.chain.head - 30],
      [logged.chain.head - 29, logged.chain.head + 10],
    ]);
  });

  it('sends a range starting past the head once, as written', async () => {
    // The node takes any range (no rule), but cascade knows a limit of 50: it would plan a split.
    const proxy = await startLogsLimitProxy(logged.anvil!.url, undefined);
    logged.stage = await startLogsStage([
      { name: 'plain', url: proxy.url, maxLogsBlockRange: LIMIT },
    ]);
    await showHead();
    const filter = { fromBlock: hex(logged.chain.head + 5), toBlock: hex(logged.chain.head + 500) };
    const own = (await direct(filter)) as Record<string, unknown>;
    const reply = await getLogs(filter);
    expect(reply.json.error ?? null).toEqual(own.error ?? null);
    expect(reply.json.result ?? null).toEqual(own.result ?? null);
    expect(proxy.asked).toEqual([[logged.chain.head + 5, logged.chain.head + 500]]);
  });

  it('prices the plan up to the head: a split the quota holds is not refused', async () => {
    // 10,001 blocks would be 201 queries (2,010 credits); up to the head, 7 (70).
    const proxy = await limitedStage({ monthlyLimit: 200 });
    await showHead();
    const filter = { fromBlock: '0x0', toBlock: hex(10_000) };
    const own = (await direct({ fromBlock: '0x0', toBlock: hex(logged.chain.head) })) as {
      result: unknown[];
    };
    const reply = await getLogs(filter);
    expect(reply.json.error).toBeUndefined();
    expect(reply.json.result).toEqual(own.result);
    expect(proxy.asked).toHaveLength(Math.ceil((logged.chain.head + 1) / LIMIT));
  });
});

describe.skipIf(unavailable !== undefined)(
  `eth_getLogs block numbers in every spelling ${unavailable ?? ''}`,
  () => {
    it.each([
      ['0x1fffffffffffff', '9,007,199,254,740,992 blocks'],
      ['0xffffffffffffffff', 'toBlock 0xffffffffffffffff is past block 9,007,199,254,740,991'],
      ['0X1000', '4,097 blocks'],
      ['0x00000000000fffff', '1,048,576 blocks'],
      ['0x000000000000000000000000000000000000000000000fff', '4,096 blocks'],
    ])('judges toBlock %s against max_logs_block_range', async (toBlock, says) => {
      const proxy = await limitedStage({ maxLogsBlockRange: 1000 });
      const reply = await getLogs({ fromBlock: '0x0', toBlock });
      expect(reply.status).toBe(400);
      expect(reply.json.error.code).toBe(-32602);
      expect(reply.json.error.message).toContain(says);
      expect(reply.json.error.message).toContain('limit of 1,000 blocks (max_logs_block_range)');
      expect(proxy.count('eth_getLogs')).toBe(0);
    });

    it('reads 0X and leading zeros as the numbers they are: planned and split', async () => {
      const proxy = await limitedStage({ maxLogsBlockRange: 1000 });
      const filter = { fromBlock: '0X0000000000000000000a', toBlock: '0x00000000000000000096' };
      const own = (await direct({ fromBlock: hex(10), toBlock: hex(150) })) as {
        result: unknown[];
      };
      const reply = await getLogs(filter);
      expect(reply.json.result).toEqual(own.result);
      // 141 blocks cut for the node's 50: three chunks, none refused.
      expect(proxy.asked).toHaveLength(3);
      expect(proxy.refused).toEqual([]);
    });

    it.each(['0x', 'soon', '0x1g'])(
      'lets toBlock %s (no block number) go to the node, which answers it',
      async (toBlock) => {
        const proxy = await limitedStage({ maxLogsBlockRange: 1000 });
        const reply = await getLogs({ fromBlock: '0x0', toBlock });
        expect(reply.json.result).toBeUndefined();
        expect(reply.json.error.message).not.toContain('max_logs_block_range');
        expect(proxy.count('eth_getLogs')).toBe(1);
      },
    );
  },
);

describe.skipIf(unavailable !== undefined)(
  `eth_getLogs past a node that would refuse it ${unavailable ?? ''}`,
  () => {
    it('sends the range whole to the next node that takes it, never to the one that refuses it', async () => {
      const refusing = await startLogsLimitProxy(logged.anvil!.url, {
        shape: 'alchemy',
        limit: 100,
      });
      const taking = await startLogsLimitProxy(logged.anvil!.url, undefined);
      logged.stage = await startLogsStage([
        // 513 blocks are 6 queries of at most 100 here, 450 credits: over its 380 before spillover.
        {
          name: 'fake-alchemy',
          tier: 0,
          url: refusing.url,
          maxLogsBlockRange: 100,
          monthlyLimit: 400,
          prices: { eth_getLogs: 75 },
        },
        { name: 'anvil-a', tier: 1, url: taking.url },
      ]);
      const filter = { fromBlock: '0x0', toBlock: '0x200' };
      const own = (await direct(filter)) as { result: unknown[] };
      const reply = await getLogs(filter);
      expect(reply.json.result).toEqual(own.result);
      expect(refusing.count('eth_getLogs')).toBe(0);
      expect(taking.asked).toEqual([[0, 0x200]]);
    });
  },
);
