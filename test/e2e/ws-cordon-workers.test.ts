/**
 * A cordon in `cascade serve --workers 2` reaches the WebSocket side of every worker: the
 * primary tells the workers, and each worker's subscriptions leave the cordoned node with the
 * ids their clients hold; new subscriptions avoid it.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MockChain, startMockNodes, type MockNode } from '../../src/mock/index.js';
import { assertBuilt, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { WsTestClient, until } from '../support/ws-client.js';

let proxy: CliProcess | undefined;
let temp: TempDir | undefined;
let mocks: MockNode[] = [];
const clients: WsTestClient[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  if (proxy && proxy.child.exitCode === null) await proxy.stop('SIGTERM');
  proxy = undefined;
  await Promise.all(mocks.splice(0).map((mock) => mock.close()));
  temp?.cleanup();
  temp = undefined;
});

function nodeToml(mock: MockNode, tier: number): string {
  return (
    `[[nodes]]\nname = "${mock.name}"\nurl = "${mock.url}"\ntier = ${tier}\nmonthly_limit = 0\n` +
    `provider_pricing_path = "prices.toml"\n\n`
  );
}

describe('cordon with --workers 2 over WebSocket', { timeout: 60_000 }, () => {
  it('moves every worker’s subscriptions off the cordoned node, same ids; new ones avoid it', async () => {
    const chain = new MockChain({ manual: true });
    mocks = await startMockNodes([
      { name: 'a', chain },
      { name: 'b', chain },
    ]);
    const [a, b] = mocks as [MockNode, MockNode];
    temp = makeTempDir('cascade-ws-cordon-');
    const port = await freePort();
    const admin = await freePort();
    writeFileSync(
      temp.path('prices.toml'),
      '[routing]\n[limits]\nunknown_method_cost = 1\n[websocket]\nsubscribe = 1\n',
    );
    writeFileSync(
      temp.path('config.toml'),
      `[server]\nhost = "127.0.0.1"\nport = ${port}\nenable_metrics = true\nadmin_port = ${admin}\n\n` +
        nodeToml(a, 0) +
        nodeToml(b, 1),
    );
    proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], { cwd: temp.dir });
    await proxy.waitFor(/workers share the port/);
    await expect
      .poll(
        async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status,
        { timeout: 20_000 },
      )
      .toBe(200);
    const ids: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const client = await WsTestClient.open(`ws://127.0.0.1:${port}`);
      clients.push(client);
      ids.push((await client.call('slotSubscribe')).result);
    }
    expect(b.ws.stats().subscriptions).toBe(0);
    const onA = a.ws.stats().subscriptions;
    expect(onA).toBeGreaterThanOrEqual(1);

    const cordon = await fetch(`http://127.0.0.1:${admin}/admin/nodes/a/cordon`, {
      method: 'POST',
    });
    expect(cordon.status).toBe(200);
    await until(() => a.ws.stats().subscriptions === 0 && b.ws.stats().subscriptions === onA);
    chain.advanceSlots(1);
    for (const [i, client] of clients.entries()) await client.notifications(ids[i], 1);
    // A new subscription, in whichever worker, goes to b.
    await clients[0]!.call('accountSubscribe', ['11111111111111111111111111111111']);
    await until(() => b.ws.stats().subscriptions === onA + 1);
    expect(a.ws.stats().subscriptions).toBe(0);
    for (const client of clients) expect(client.messages).toEqual([]);
  });
});
