/**
 * Reload (SIGHUP) with chains and accounts (issue 28): chains are added, removed and changed,
 * accounts too, and every node's and account's usage is kept, over HTTP and WebSocket.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { startMultiChain, type ChainSpec, type MultiChain } from '../support/multi-chain.js';

let harness: MultiChain | undefined;
let extra: MockNode[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(extra.map((mock) => mock.close()));
  extra = [];
});

const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });
const NO_CACHE = '[cache]\nenabled = false\ncoalesce = false\n';
const ACCOUNT = (limit: number) => `[[accounts]]\nname = "plan"\nmonthly_limit = ${limit}\n`;

async function wsSlot(url: string): Promise<unknown> {
  const socket = new WebSocket(url);
  try {
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answer = new Promise<unknown>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))),
    );
    socket.send(JSON.stringify(rpc('getSlot', 1)));
    return await answer;
  } finally {
    socket.close();
  }
}

describe('reload with chains and accounts', () => {
  it('adds, removes and changes chains and accounts, keeping all usage', async () => {
    const first: ChainSpec[] = [
      { name: 'a', nodes: [{ name: 'a1', toml: 'tier = 0\naccount = "plan"' }] },
      { name: 'b', nodes: [{ name: 'b1' }] },
    ];
    harness = await startMultiChain(first, { top: NO_CACHE + ACCOUNT(1000) });
    const h = harness;
    for (let i = 0; i < 3; i++) await h.post('/a', rpc('getSlot', i));
    await h.post('/b', rpc('getSlot', 9));
    const topology = () => h.cascade.server.topology;
    expect(topology().account('plan')!.usage.used).toBe(3);

    extra = await startMockNodes([{ name: 'c1' }]);
    const second: ChainSpec[] = [
      {
        name: 'a',
        toml: 'paths = ["/a", "/alpha"]',
        nodes: [{ name: 'a1', toml: 'tier = 0\naccount = "plan"' }],
      },
      {
        name: 'c',
        nodes: [{ name: 'c1', url: extra[0]!.url, toml: 'tier = 0\naccount = "plan"' }],
      },
    ];
    h.rewrite(second, NO_CACHE + ACCOUNT(2000));
    const outcome = h.cascade.reload();
    expect(outcome.ok).toBe(true);
    expect(h.logs.join('')).toContain('config reloaded: +1 -1');

    // b is gone (404, its WebSocket path too), c serves, a answers on its new path as well.
    expect((await h.post('/b', rpc('getSlot', 1))).status).toBe(404);
    expect((await h.post('/c', rpc('getSlot', 2))).status).toBe(200);
    expect((await h.post('/alpha/send-request', rpc('getSlot', 3))).status).toBe(200);
    expect(await wsSlot(`${h.url.replace('http', 'ws')}/c`)).toMatchObject({ id: 1 });
    expect(extra[0]!.stats().requests).toBe(2);
    expect(h.mocks.a1!.stats().requests).toBe(4);
    // The account kept its pool and its new limit; a1 kept its own usage.
    const plan = topology().account('plan')!;
    expect(plan.usage.used).toBe(3 + 1 + 2);
    expect(plan.config.monthlyLimit).toBe(2000);
    expect(topology().node('a1')!.usage.used).toBe(4);
    expect(topology().node('b1')).toBeUndefined();
  });

  it('moves a node to another account: its calls book into the new pool from then on', async () => {
    const top = `${NO_CACHE}[[accounts]]\nname = "one"\nmonthly_limit = 100\n[[accounts]]\nname = "two"\nmonthly_limit = 100\n`;
    const chains = (account: string): ChainSpec[] => [
      {
        name: 'a',
        nodes: [
          { name: 'a1', toml: `tier = 0\naccount = "${account}"` },
          { name: 'a2', toml: 'tier = 1\naccount = "one"' },
        ],
      },
    ];
    harness = await startMultiChain(chains('one'), { top });
    const h = harness;
    await h.post('/a', rpc('getSlot', 1));
    h.rewrite(chains('two'), top);
    expect(h.cascade.reload().ok).toBe(true);
    await h.post('/a', rpc('getSlot', 2));
    await h.post('/a', rpc('getSlot', 3));
    const topology = h.cascade.server.topology;
    expect(topology.account('one')!.usage.used).toBe(1);
    expect(topology.account('two')!.usage.used).toBe(2);
    expect(topology.node('a1')!.usage.used).toBe(3);
  });
});
