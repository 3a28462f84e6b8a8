/**
 * `cascade serve --workers 2` on two chains with a shared provider account (issue 28): the
 * primary answers /health, /admin/nodes and /metrics for the whole proxy with the chains and
 * the accounts, from what its workers report.
 */
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { startCli } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { freePort } from '../support/free-port.js';

const fixture = useE2eFixture();

async function post(url: string, method: string, id: number): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id, method }),
  });
  await response.text();
  return response.status;
}

async function json(url: string): Promise<Record<string, unknown>> {
  return (await (await fetch(url)).json()) as Record<string, unknown>;
}

describe('--workers 2 with chains and accounts', () => {
  it('answers /health, /admin/nodes and /metrics with the chains and the account pool', async () => {
    const temp = fixture.tempDir();
    const mocks = await startMockNodes([{ name: 'sol-a' }, { name: 'evm-a' }, { name: 'evm-b' }]);
    fixture.mocks.push(...mocks);
    const [port, adminPort] = [await freePort(), await freePort()];
    const node = (name: string, extra: string) =>
      `[[chains.nodes]]\nname = "${name}"\nurl = "${mocks.find((m) => m.name === name)!.url}"\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n${extra}\n`;
    temp.write({
      'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\n',
      'config.toml': [
        `[server]\nhost = "127.0.0.1"\nport = ${port}\nenable_metrics = true\nadmin_port = ${adminPort}\n`,
        '[cache]\nenabled = false\ncoalesce = false\n',
        '[[accounts]]\nname = "shared"\nmonthly_limit = 500\n',
        '[[chains]]\nname = "sol"\n',
        node('sol-a', 'tier = 0\naccount = "shared"'),
        '[[chains]]\nname = "evm"\n',
        node('evm-a', 'tier = 0\naccount = "shared"'),
        node('evm-b', 'tier = 1'),
      ].join('\n'),
    });
    const proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], {
      cwd: temp.dir,
    });
    fixture.processes.push(proxy);
    await proxy.waitFor(/workers share the port/);
    const url = `http://127.0.0.1:${port}`;
    await expect
      .poll(async () => (await fetch(`${url}/health`).catch(() => undefined))?.status)
      .toBe(200);
    for (let i = 0; i < 6; i++) expect(await post(`${url}/sol`, 'getSlot', i)).toBe(200);
    for (let i = 0; i < 4; i++) expect(await post(`${url}/evm`, 'eth_blockNumber', i)).toBe(200);

    // The primary's ledger hears the workers' usage at their next syncs.
    await expect
      .poll(async () => (await json(`${url}/health`)).accounts)
      .toEqual([
        expect.objectContaining({
          name: 'shared',
          used: 10,
          quota: 500,
          nodes: ['sol-a', 'evm-a'],
        }),
      ]);
    const health = await json(`${url}/health`);
    expect(health.chains).toEqual([
      { name: 'sol', paths: ['/sol'], hosts: [], status: 'ok', active_nodes: 1, total_nodes: 1 },
      { name: 'evm', paths: ['/evm'], hosts: [], status: 'ok', active_nodes: 2, total_nodes: 2 },
    ]);
    expect(
      (health.nodes as Array<Record<string, unknown>>).map((n) => [n.name, n.chain, n.account]),
    ).toEqual([
      ['sol-a', 'sol', 'shared'],
      ['evm-a', 'evm', 'shared'],
      ['evm-b', 'evm', undefined],
    ]);

    const doc = await json(`http://127.0.0.1:${adminPort}/admin/nodes`);
    expect(doc.workers).toBe(2);
    expect((doc.chains as Array<{ name: string }>).map((chain) => chain.name)).toEqual([
      'sol',
      'evm',
    ]);
    expect(doc.accounts).toEqual([
      expect.objectContaining({ name: 'shared', credits_used: 10, nodes: ['sol-a', 'evm-a'] }),
    ]);
    expect(
      (doc.nodes as Array<Record<string, unknown>>).map((n) => [n.name, n.chain, n.rank]),
    ).toEqual([
      ['sol-a', 'sol', 1],
      ['evm-a', 'evm', 1],
      ['evm-b', 'evm', 2],
    ]);

    // Counters add up over the workers; each request counted once, in its chain.
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = (name: string, labels: Record<string, string>) => {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
      const line = text.split('\n').find((l) => l.startsWith(`${name}{${selector}} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(value('rpc_chain_requests_total', { chain: 'sol', outcome: 'forwarded' })).toBe(6);
    expect(value('rpc_chain_requests_total', { chain: 'evm', outcome: 'forwarded' })).toBe(4);
    expect(value('rpc_node_info', { node: 'evm-b', chain: 'evm', account: '', tier: '1' })).toBe(1);
    expect(value('rpc_account_quota', { account: 'shared' })).toBe(500);
  });
});
