/**
 * The WebSocket side of the built CLI, as a user starts it: `cascade serve --demo` gives
 * @solana/web3.js everything with only the HTTP URL (the socket at port + 1), and
 * `cascade serve --workers 2` takes sockets in every worker of the shared port.
 */
import { writeFileSync } from 'node:fs';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { sendAndConfirmTransaction } from '@solana/web3.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { assertBuilt } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { freePort, freePortPair } from '../support/free-port.js';
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

describe('cascade serve --demo over WebSocket', { timeout: 60_000 }, () => {
  it('serves web3.js given only the HTTP URL: slot notifications and a confirmed transfer', async () => {
    temp = makeTempDir('cascade-ws-demo-');
    const port = await freePortPair();
    proxy = startCli(['serve', '--demo', '--port', String(port)], { cwd: temp.dir });
    const line = await proxy.waitFor(/cascade demo serving/);
    expect(line).toContain(`ws://127.0.0.1:${port + 1}`);
    const connection = new Connection(`http://127.0.0.1:${port}`, 'confirmed');
    const slots: number[] = [];
    const listener = connection.onSlotChange((info) => slots.push(info.slot));
    await until(() => slots.length >= 2);
    expect(slots[1]).toBeGreaterThan(slots[0]!);
    const payer = Keypair.generate();
    const transfer = new Transaction().add(
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1000,
      }),
    );
    const signature = await sendAndConfirmTransaction(connection, transfer, [payer]);
    expect(typeof signature).toBe('string');
    await connection.removeSlotChangeListener(listener);
  });
});

describe('cascade serve --workers 2 over WebSocket', { timeout: 60_000 }, () => {
  it('takes sockets in each worker and streams each its notifications', async () => {
    mocks = await startMockNodes([{ name: 'a' }]);
    temp = makeTempDir('cascade-ws-workers-');
    const port = await freePort();
    writeFileSync(
      temp.path('prices.toml'),
      '[routing]\n[limits]\nunknown_method_cost = 1\n[websocket]\nsubscribe = 1\n',
    );
    writeFileSync(
      temp.path('config.toml'),
      `[server]\nhost = "127.0.0.1"\nport = ${port}\nenable_metrics = true\n\n` +
        `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\n` +
        `provider_pricing_path = "prices.toml"\n`,
    );
    proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], { cwd: temp.dir });
    await proxy.waitFor(/workers share the port/);
    const url = `ws://127.0.0.1:${port}`;
    await expect
      .poll(
        async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status,
        {
          timeout: 20_000,
        },
      )
      .toBe(200);
    for (let i = 0; i < 6; i++) clients.push(await WsTestClient.open(url));
    for (const client of clients) {
      const { result: id } = await client.call('slotSubscribe');
      const [first, second] = await client.notifications(id, 2);
      const slots = [first, second].map((note) => note!.params.result.slot as number);
      expect(slots[1]).toBeGreaterThan(slots[0]!);
    }
    // Each worker places its own upstream subscription (at most one per worker).
    const upstream = mocks[0]!.ws.stats().subscribes.slotSubscribe ?? 0;
    expect(upstream).toBeGreaterThanOrEqual(1);
    expect(upstream).toBeLessThanOrEqual(2);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^cascade_ws_client_connections 6$/m);
  });
});
