/**
 * eth_getLogs range planning against a real EVM node (issue 29): anvil behind two providers
 * with different limits (Alchemy's words at 200 blocks, QuickNode's at 1,000: proxies in front
 * of anvil that answer each provider's own error). The chain's genesis is block 27,000 (anvil
 * --number) and 3,000 blocks are mined on it with logs every 100: mining costs anvil more per
 * block the longer its chain (here 169 s for 10,000 blocks), so the first 27,000 blocks of the
 * 30,000-block range are blocks anvil does not have (empty answers, as from any node) and the
 * logs sit in the last 3,000 — 15 of its 150 chunks. Through cascade — an HTTP request, an HTTP batch element, a WebSocket request and
 * a WebSocket batch element alike — a 30,000-block eth_getLogs equals anvil's own answer log
 * for log, in order; it is cut for the node it went to, never sent whole to a node that would
 * refuse it; a failing chunk fails over alone; ethers and viem work unchanged. Skips, saying
 * why, where anvil cannot run.
 */
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http, webSocket } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilUnavailable, startAnvil, type Anvil } from '../support/anvil.js';
import { mineLogs, type LoggedChain } from '../support/anvil-logs.js';
import { DOORS, openDoor } from '../support/doors.js';
import {
  startLogsLimitProxy,
  type LogsLimitProxy,
  type Range,
} from '../support/logs-limit-proxy.js';
import { startLogsStage, type LogsStage } from '../support/logs-stage.js';
import { metricValue } from '../support/routing-config.js';
import { closeUpstreams } from '../support/upstreams.js';

const unavailable = anvilUnavailable();
const BLOCKS = 30_000;
const GENESIS = 27_000;
const CHEAP_LIMIT = 200;
const WIDE_LIMIT = 1000;
const hex = (n: number): string => `0x${n.toString(16)}`;
/** rpc_logs_split_requests_total (it has no labels). */
const splitsOf = (text: string): number =>
  Number(/^rpc_logs_split_requests_total (\d+)$/m.exec(text)?.[1] ?? NaN);

let anvil: Anvil | undefined;
let chain: LoggedChain;
let cheap: LogsLimitProxy;
let wide: LogsLimitProxy;
let stage: LogsStage | undefined;

beforeAll(async () => {
  if (unavailable !== undefined) return;
  anvil = await startAnvil(['--number', String(GENESIS)]);
  chain = await mineLogs(anvil, BLOCKS - GENESIS, 100);
  cheap = await startLogsLimitProxy(anvil.url, { shape: 'alchemy', limit: CHEAP_LIMIT });
  wide = await startLogsLimitProxy(anvil.url, { shape: 'quicknode', limit: WIDE_LIMIT });
  stage = await startLogsStage(
    [
      {
        name: 'cheap',
        tier: 0,
        url: cheap.url,
        maxLogsBlockRange: CHEAP_LIMIT,
        prices: { eth_getLogs: 10 },
      },
      {
        name: 'wide',
        tier: 1,
        url: wide.url,
        maxLogsBlockRange: WIDE_LIMIT,
        prices: { eth_getLogs: 20 },
      },
    ],
    { server: { enableMetrics: true } },
  );
}, 120_000);

afterAll(async () => {
  await stage?.close();
  await closeUpstreams();
  await anvil?.stop();
});

/** The 30,000 blocks that hold the logs. */
const FILTER = () => ({ fromBlock: hex(chain.head - BLOCKS + 1), toBlock: hex(chain.head) });

/** Whether `ranges` cover `from`..`to` exactly once, in order. */
function coverage(ranges: readonly Range[]): Range | undefined {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]![0] !== sorted[i - 1]![1] + 1) return undefined;
  return sorted.length === 0 ? undefined : [sorted[0]![0], sorted.at(-1)![1]];
}

describe.skipIf(unavailable !== undefined)(
  `eth_getLogs split on anvil ${unavailable ?? ''}`,
  () => {
    it.each(DOORS)(
      'a 30,000-block eth_getLogs through the %s door equals anvil log for log',
      async (name) => {
        const direct = await anvil!.call('eth_getLogs', [FILTER()]);
        expect((direct as unknown[]).length).toBe(chain.logBlocks.length * 2);
        cheap.reset();
        wide.reset();
        const splits = splitsOf(await stage!.metrics());
        const door = await openDoor(name, stage!);
        try {
          const reply = await door.send({ method: 'eth_getLogs', params: [FILTER()], id: 7 });
          expect(reply.answer.error).toBeUndefined();
          expect(reply.answer.id).toBe(7);
          expect(reply.answer.result).toEqual(direct);
        } finally {
          door.close();
        }
        // Cut for the node it went to: 150 chunks of 200 blocks, each asked once, none refused.
        const chunks = cheap.asked;
        expect(chunks).toHaveLength(BLOCKS / CHEAP_LIMIT);
        expect(chunks.every(([a, b]) => b - a + 1 <= CHEAP_LIMIT)).toBe(true);
        expect(coverage(chunks)).toEqual([chain.head - BLOCKS + 1, chain.head]);
        expect(cheap.refused).toEqual([]);
        expect(wide.count('eth_getLogs')).toBe(0);
        const text = await stage!.metrics();
        expect(splitsOf(text)).toBe(splits + 1);
        expect(
          metricValue(text, 'rpc_logs_chunks_total', { node: 'cheap' }),
        ).toBeGreaterThanOrEqual(BLOCKS / CHEAP_LIMIT);
      },
    );

    it('resolves latest to a block before cutting, and a topics filter survives the split', async () => {
      const filter = {
        fromBlock: hex(chain.head - BLOCKS + 1),
        toBlock: 'latest',
        topics: [chain.topic],
      };
      const direct = await anvil!.call('eth_getLogs', [filter]);
      expect((direct as unknown[]).length).toBe(chain.logBlocks.length);
      cheap.reset();
      const reply = await stage!.post({
        jsonrpc: '2.0',
        id: 'x',
        method: 'eth_getLogs',
        params: [filter],
      });
      expect(reply.status).toBe(200);
      expect(reply.json.result).toEqual(direct);
      expect(cheap.refused).toEqual([]);
      expect(coverage(cheap.asked)).toEqual([chain.head - BLOCKS + 1, chain.head]);
    });

    it('fails one chunk over to the other node without repeating the answered ones', async () => {
      // A chunk with logs in it: blocks 29,001..29,200.
      const failing: Range = [chain.head - 999, chain.head - 800];
      cheap.reset();
      wide.reset();
      cheap.failOnce(failing, { code: -32000, message: 'header not found' });
      const direct = await anvil!.call('eth_getLogs', [FILTER()]);
      const reply = await stage!.post({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [FILTER()],
      });
      expect(reply.json.result).toEqual(direct);
      // Every chunk asked of the cheap node once (the failed one included), only that one elsewhere.
      const asked = cheap.asked.map(([a, b]) => `${a}-${b}`);
      expect(new Set(asked).size).toBe(asked.length);
      expect(asked).toHaveLength(BLOCKS / CHEAP_LIMIT);
      expect(wide.asked).toEqual([failing]);
    });

    it('keeps the final chunks in the cache: asked again, only the chunk at the head goes out', async () => {
      const cached = await startLogsStage(
        [{ name: 'cheap', tier: 0, url: cheap.url, maxLogsBlockRange: CHEAP_LIMIT }],
        {
          cache: {
            enabled: true,
            coalesce: true,
            maxBytes: 64 * 1024 * 1024,
            maxEntryBytes: 8 * 1024 * 1024,
            ttlMs: 400,
            // Blocks 10 below the newest one seen are final (anvil has no finality of its own).
            evmFinalityDepth: 10,
            responseHeader: false,
            methods: new Map(),
          },
        },
      );
      try {
        const direct = await anvil!.call('eth_getLogs', [FILTER()]);
        const ask = () =>
          cached.post({ jsonrpc: '2.0', id: 5, method: 'eth_getLogs', params: [FILTER()] });
        // The first answers teach the head; from then on every chunk below it is final.
        for (let i = 0; i < 2; i++) expect((await ask()).json.result).toEqual(direct);
        cheap.reset();
        expect((await ask()).json.result).toEqual(direct);
        expect(cheap.asked).toEqual([[chain.head - CHEAP_LIMIT + 1, chain.head]]);
      } finally {
        await cached.close();
      }
    });

    it("viem's and ethers' getLogs work unchanged (HTTP, HTTP batch, WebSocket)", async () => {
      const s = stage!;
      const [from, to] = [BigInt(chain.head - BLOCKS + 1), BigInt(chain.head)];
      const direct = await createPublicClient({ transport: http(anvil!.url) }).getLogs({
        fromBlock: from,
        toBlock: to,
      });
      expect(direct.length).toBe(chain.logBlocks.length * 2);
      for (const transport of [http(s.url), http(s.url, { batch: true }), webSocket(s.wsUrl)]) {
        const client = createPublicClient({ transport });
        expect(await client.getLogs({ fromBlock: from, toBlock: to })).toEqual(direct);
      }
      const ethersDirect = new JsonRpcProvider(anvil!.url, undefined, { staticNetwork: true });
      const ethersThrough = new JsonRpcProvider(s.url, undefined, { staticNetwork: true });
      try {
        const filter = { fromBlock: Number(from), toBlock: Number(to) };
        const [a, b] = await Promise.all([
          ethersDirect.getLogs(filter),
          ethersThrough.getLogs(filter),
        ]);
        const plain = (logs: typeof a): unknown[] => logs.map((log): unknown => log.toJSON());
        expect(plain(b)).toEqual(plain(a));
      } finally {
        ethersDirect.destroy();
        ethersThrough.destroy();
      }
    });
  },
);
