/**
 * Provider accounts across a reload (SIGHUP's path: the file re-read, the node set and the
 * usage ledger applied together). An account that stays keeps its pool and period under its
 * new limits; a node moved to another account books into the new pool from then on; an
 * account removed leaves quotas.json at the next write and one added — or added again —
 * starts from zero, exactly as a node does.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startMultiChain, type ChainSpec, type MultiChain } from '../support/multi-chain.js';

let harness: MultiChain | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const NO_CACHE = '[cache]\nenabled = false\ncoalesce = false\n';
const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });

/** sol and evm, each a premium node billed to `sol`/`evm` (no key: none) and a backup. */
function chains(sol: string | undefined, evm: string | undefined): ChainSpec[] {
  const billed = (account: string | undefined) =>
    account === undefined ? 'tier = 0\nmonthly_limit = 0' : `tier = 0\naccount = "${account}"`;
  return [
    {
      name: 'sol',
      nodes: [
        { name: 'sol-prem', toml: billed(sol) },
        { name: 'sol-backup', toml: 'tier = 1\nmonthly_limit = 0' },
      ],
    },
    {
      name: 'evm',
      nodes: [
        { name: 'evm-prem', toml: billed(evm) },
        { name: 'evm-backup', toml: 'tier = 1\nmonthly_limit = 0' },
      ],
    },
  ];
}

const account = (name: string, limit: number) =>
  `[[accounts]]\nname = "${name}"\nmonthly_limit = ${limit}\nspillover_percent = 100\n`;

/** Sends `count` calls to `chain` one after the other; the nodes that answered. */
async function calls(h: MultiChain, chain: 'sol' | 'evm', count: number): Promise<string[]> {
  const nodes: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await h.post(`/${chain}`, rpc(chain === 'sol' ? 'getSlot' : 'eth_chainId', i));
    expect(answer.status).toBe(200);
    nodes.push(answer.headers.get('x-cascade-node') ?? '?');
  }
  return nodes;
}

function reload(h: MultiChain, next: ChainSpec[], top: string): void {
  h.rewrite(next, top);
  const outcome = h.cascade.reload();
  expect(outcome).toMatchObject({ ok: true });
}

const pool = (h: MultiChain, name: string) => h.cascade.server.topology.account(name)?.usage.used;
const own = (h: MultiChain, name: string) => h.cascade.server.topology.node(name)!.ownUsage.used;

function quotas(h: MultiChain): Record<string, { used: number; period_start: string }> {
  return JSON.parse(readFileSync(h.temp.path('quotas.json'), 'utf8')) as Record<
    string,
    { used: number; period_start: string }
  >;
}

/**
 * Read first, so it lands in the harness's [server] table: answers name their node, and
 * budgets no busy machine exhausts (an attempt timed out would be sent again elsewhere).
 */
const HEADERS = 'routing_headers = true\nrequest_timeout_ms = 30000\nattempt_timeout_ms = 15000\n';

describe('provider accounts across a reload', () => {
  it('keep their pool and period when their limits change; the spill follows the new threshold', async () => {
    const top = (limit: number) => `${HEADERS}${NO_CACHE}${account('shared', limit)}`;
    harness = await startMultiChain(chains('shared', 'shared'), { top: top(10) });
    const h = harness;
    // 6 + 5 premium calls: the 11th passes the threshold of 10; both chains spill.
    expect(await calls(h, 'sol', 6)).toEqual(Array(6).fill('sol-prem'));
    expect(await calls(h, 'evm', 5)).toEqual(Array(5).fill('evm-prem'));
    expect(await calls(h, 'sol', 1)).toEqual(['sol-backup']);
    expect(await calls(h, 'evm', 1)).toEqual(['evm-backup']);
    const period = h.cascade.server.topology.account('shared')!;
    reload(h, chains('shared', 'shared'), top(13));
    // The same pool, 11 booked: two more calls fit under 13, then both chains spill again.
    expect(h.cascade.server.topology.account('shared')).toBe(period);
    expect(pool(h, 'shared')).toBe(11);
    expect(h.logs.join('')).toContain('config reloaded: +0 -0 ~0');
    expect(await calls(h, 'evm', 3)).toEqual(['evm-prem', 'evm-prem', 'evm-prem']);
    expect(await calls(h, 'sol', 1)).toEqual(['sol-backup']);
    await h.stopCascade();
    const file = quotas(h);
    expect(file['account:shared']!.used).toBe(14);
    expect(file['sol-prem']!.used + file['evm-prem']!.used).toBe(14);
  });

  it('books a node moved to another account into the new pool from then on', async () => {
    const top = `${HEADERS}${NO_CACHE}${account('a', 10)}${account('b', 100)}`;
    harness = await startMultiChain(chains('a', 'a'), { top });
    const h = harness;
    await calls(h, 'sol', 4);
    await calls(h, 'evm', 4);
    expect([pool(h, 'a'), pool(h, 'b')]).toEqual([8, 0]);
    reload(h, chains('a', 'b'), top);
    expect(h.logs.join('')).toContain('evm-prem: account');
    await calls(h, 'evm', 3);
    await calls(h, 'sol', 2);
    expect([pool(h, 'a'), pool(h, 'b')]).toEqual([10, 3]);
    // The node keeps its own usage across the move.
    expect(own(h, 'evm-prem')).toBe(7);
    // a passes its threshold: sol spills, evm (billed to b now) does not.
    expect(await calls(h, 'sol', 2)).toEqual(['sol-prem', 'sol-backup']);
    expect(await calls(h, 'evm', 2)).toEqual(['evm-prem', 'evm-prem']);
    await h.stopCascade();
    const file = quotas(h);
    expect(file['account:a']!.used).toBe(11);
    expect(file['account:b']!.used).toBe(5);
    expect(file['evm-prem']!.used).toBe(9);
  });

  it('forgets a removed account at the next write and starts an added one from zero, as nodes', async () => {
    const withA = `${HEADERS}${NO_CACHE}${account('a', 10)}`;
    harness = await startMultiChain(chains('a', 'a'), { top: withA });
    const h = harness;
    await calls(h, 'sol', 3);
    await calls(h, 'evm', 2);
    // Remove the account (and, for comparison, a node): their usage is forgotten.
    const removed = chains(undefined, undefined).map((chain) =>
      chain.name === 'sol' ? { ...chain, nodes: chain.nodes.slice(0, 1) } : chain,
    );
    await calls(h, 'sol', 1); // one call on sol-prem (a = 6)
    reload(h, removed, `${HEADERS}${NO_CACHE}`);
    const logs = h.logs.join('');
    expect(logs).toContain('"account":"a","used":6');
    expect(logs).toContain('account removed; its usage leaves quotas.json at the next write');
    expect(h.cascade.server.topology.account('a')).toBeUndefined();
    // Unbilled now: premium serves past what the account allowed.
    expect(await calls(h, 'sol', 8)).toEqual(Array(8).fill('sol-prem'));
    await h.stopCascade();
    const without = quotas(h);
    expect(without['account:a']).toBeUndefined();
    expect(without['sol-backup']).toBeUndefined();
    expect(without['sol-prem']!.used).toBe(12);
    await (h as MultiChain & { restart(): Promise<void> }).restart();
    // Added again within the period: the account starts from zero, as the re-added node does.
    reload(h, chains('a', 'a'), withA);
    expect(pool(h, 'a')).toBe(0);
    expect(own(h, 'sol-backup')).toBe(0);
    expect(await calls(h, 'evm', 2)).toEqual(['evm-prem', 'evm-prem']);
    await h.stopCascade();
    const again = quotas(h);
    expect(again['account:a']).toMatchObject({ used: 2 });
    expect(again['account:a']!.period_start).toMatch(/^\d{4}-\d{2}-01$/);
    expect(again['sol-backup']).toMatchObject({ used: 0 });
  });
});
