/**
 * eth_getLogs limits learned from the providers' own errors (issue 29): anvil (genesis block
 * 27,000, logs every 100 of the 3,000 blocks mined after it) behind one provider at a time that
 * cascade knows no limit of, answering in that provider's words — Alchemy's and QuickNode's
 * range limits, Infura's range limit and its result cap with `data: {from, to, limit}`, geth's
 * result cap. The first 30,000-block eth_getLogs is answered in full (the node's error teaches
 * the limit and the request is split with what it said), the limit shows in /metrics and
 * GET /admin/nodes and survives a reload, and a range-limited provider is then never sent a
 * range it refuses. Skips, saying why, where anvil cannot run.
 */
import { describe, expect, it } from 'vitest';
import type { LogsLimitShape } from '../../src/mock/index.js';
import { anvilUnavailable } from '../support/anvil.js';
import { useLoggedAnvil } from '../support/anvil-logs.js';
import { startLogsLimitProxy } from '../support/logs-limit-proxy.js';
import { startLogsStage, type LogsStage, type StageNode } from '../support/logs-stage.js';
import { metricValue } from '../support/routing-config.js';

const unavailable = anvilUnavailable();
const GENESIS = 27_000;
const hex = (n: number): string => `0x${n.toString(16)}`;

const logged = useLoggedAnvil(unavailable, ['--number', String(GENESIS)], 3000, 100);

const FILTER = () => ({ fromBlock: '0x1', toBlock: hex(logged.chain.head) });

/** One provider's words, its limit, and what cascade learns: blocks per query or logs. */
const CASES: ReadonlyArray<readonly [LogsLimitShape, number, 'block_range' | 'results']> = [
  ['alchemy', 500, 'block_range'],
  ['quicknode', 1000, 'block_range'],
  ['infura_range', 700, 'block_range'],
  ['infura', 5, 'results'],
  ['geth', 9, 'results'],
];

async function getLogs(s: LogsStage, id: number): Promise<unknown> {
  const reply = await s.post({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [FILTER()] });
  expect(reply.status).toBe(200);
  expect(reply.json.error).toBeUndefined();
  return reply.json.result;
}

async function adminRow(s: LogsStage): Promise<Record<string, unknown>> {
  const doc = (await (await fetch(`${s.admin}/admin/nodes`)).json()) as {
    nodes: Array<Record<string, unknown>>;
  };
  return doc.nodes[0]!;
}

describe.skipIf(unavailable !== undefined)(
  `eth_getLogs limits learned on anvil ${unavailable ?? ''}`,
  () => {
    it.each(CASES)(
      '%s at %i teaches %s, and the first request is answered whole',
      async (shape, limit, kind) => {
        const proxy = await startLogsLimitProxy(logged.anvil!.url, { shape, limit });
        const node: StageNode = { name: 'p', tier: 0, url: proxy.url };
        const s = (logged.stage = await startLogsStage([node], {
          server: { enableMetrics: true },
        }));
        const direct = await logged.anvil!.call('eth_getLogs', [FILTER()]);
        expect((direct as unknown[]).length).toBe(logged.chain.logBlocks.length * 2);

        expect(await getLogs(s, 1)).toEqual(direct);
        expect(proxy.refused.length).toBeGreaterThan(0);
        const text = await s.metrics();
        expect(metricValue(text, 'rpc_logs_learned_limit', { node: 'p', kind })).toBe(limit);
        expect(
          (await adminRow(s))[
            kind === 'results' ? 'logs_results_learned' : 'logs_block_range_learned'
          ],
        ).toBe(limit);
        expect(s.logs.some((line) => line.includes('eth_getLogs limit learned'))).toBe(true);

        // Learned: a range limit is planned for from now on; a result cap is cut to on the go.
        proxy.reset();
        expect(await getLogs(s, 2)).toEqual(direct);
        if (kind === 'block_range') {
          expect(proxy.refused).toEqual([]);
          expect(proxy.asked.every(([a, b]) => b - a + 1 <= limit)).toBe(true);
        }

        // A reload that keeps the node keeps what it taught.
        s.reload([node]);
        expect(metricValue(await s.metrics(), 'rpc_logs_learned_limit', { node: 'p', kind })).toBe(
          limit,
        );
      },
    );

    it('a node with a known limit is passed over for a range it cannot take, with no penalty', async () => {
      const narrow = await startLogsLimitProxy(logged.anvil!.url, { shape: 'alchemy', limit: 500 });
      const open = await startLogsLimitProxy(logged.anvil!.url, undefined);
      const s = (logged.stage = await startLogsStage(
        [
          { name: 'narrow', tier: 0, url: narrow.url },
          { name: 'open', tier: 1, url: open.url, prices: { eth_getLogs: 50 } },
        ],
        { server: { enableMetrics: true } },
      ));
      const direct = await logged.anvil!.call('eth_getLogs', [FILTER()]);
      // Unknown limits: the cheap node refuses, the next one answers; nobody is penalized.
      expect(await getLogs(s, 1)).toEqual(direct);
      expect(narrow.refused).toHaveLength(1);
      expect(open.asked).toHaveLength(1);
      const rows = (await (await fetch(`${s.admin}/admin/nodes`)).json()) as {
        nodes: Array<{ name: string; state: string }>;
      };
      expect(rows.nodes.find((n) => n.name === 'narrow')!.state).not.toBe('penalized');
      // Known now: the plan cuts the range for the cheap node, which refuses nothing more.
      narrow.reset();
      open.reset();
      expect(await getLogs(s, 2)).toEqual(direct);
      expect(narrow.refused).toEqual([]);
      expect(narrow.asked).toHaveLength(Math.ceil(logged.chain.head / 500));
      expect(open.asked).toEqual([]);
    });
  },
);
