/**
 * Real client libraries given an RPC URL with the client key in its path (issue 27), as a
 * wallet or dApp would be configured: @solana/web3.js' Connection over HTTP and the WebSocket
 * it derives at port + 1 (the path kept), viem's http and webSocket transports, and ethers'
 * JsonRpcProvider (which batches) and WebSocketProvider. The same calls without the key are
 * refused; no node sees the key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from '@solana/web3.js';
import { createPublicClient, http, webSocket } from 'viem';
import { mainnet } from 'viem/chains';
import { JsonRpcProvider, WebSocketProvider } from 'ethers';
import { clientKey, keysOf } from '../support/client-keys.js';
import { freePortPair } from '../support/free-port.js';
import { until } from '../support/ws-client.js';
import { startWsHarness, type WsHarness } from '../support/ws-harness.js';

const KEY = 'ck_dapp_0123456789abcdefghijklmnopq';
let harness: WsHarness | undefined;
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness?.close();
  harness = undefined;
});

async function startKeyed(server: Record<string, unknown> = {}): Promise<WsHarness> {
  harness = await startWsHarness([{ name: 'a' }], {
    keys: keysOf(clientKey('dapp', KEY)),
    server: { requireKey: true, ...server },
  });
  return harness;
}

function keyLeaked(): boolean {
  return harness!.logs.join('').includes(KEY);
}

describe('@solana/web3.js Connection with the key in the URL path', () => {
  it('calls over HTTP and subscribes on the derived port + 1 WebSocket', async () => {
    const port = await freePortPair();
    await startKeyed({ port, wsPort: port + 1 });
    const connection = new Connection(`${harness!.url}/${KEY}`, 'confirmed');
    expect(await connection.getSlot()).toBeTypeOf('number');
    const slots: number[] = [];
    const listener = connection.onSlotChange((info) => slots.push(info.slot));
    await until(() => harness!.cascade.ws.hub.counts().clients === 1);
    harness!.chain.advanceSlots(2);
    await until(() => slots.length >= 2);
    await connection.removeSlotChangeListener(listener);
    const keyless = new Connection(harness!.url, 'confirmed');
    await expect(keyless.getSlot()).rejects.toThrow(/401|client key/);
    expect(keyLeaked()).toBe(false);
  });
});

describe('viem with the key in the URL path', () => {
  it('reads the block number over http and webSocket', async () => {
    await startKeyed();
    const overHttp = createPublicClient({
      chain: mainnet,
      transport: http(`${harness!.url}/${KEY}`, { retryCount: 0 }),
    });
    expect(await overHttp.getBlockNumber()).toBe(BigInt(harness!.chain.blockNumber()));
    const overWs = createPublicClient({
      chain: mainnet,
      transport: webSocket(`${harness!.wsUrl}/${KEY}`, { retryCount: 0 }),
    });
    cleanups.push(async () => (await overWs.transport.getRpcClient()).close());
    expect(await overWs.getBlockNumber()).toBe(BigInt(harness!.chain.blockNumber()));
    const keyless = createPublicClient({
      chain: mainnet,
      transport: http(harness!.url, { retryCount: 0 }),
    });
    await expect(keyless.getBlockNumber()).rejects.toThrow();
    expect(keyLeaked()).toBe(false);
  });
});

describe('ethers with the key in the URL path', () => {
  it('reads over JsonRpcProvider (batched) and WebSocketProvider', async () => {
    await startKeyed();
    const provider = new JsonRpcProvider(`${harness!.url}/${KEY}`, 1, { staticNetwork: true });
    cleanups.push(() => provider.destroy());
    const [a, b] = await Promise.all([provider.getBlockNumber(), provider.getBlockNumber()]);
    expect(a).toBe(harness!.chain.blockNumber());
    expect(b).toBe(a);
    const socket = new WebSocketProvider(`${harness!.wsUrl}/${KEY}`);
    cleanups.push(() => socket.destroy());
    expect(await socket.getBlockNumber()).toBe(harness!.chain.blockNumber());
    expect(keyLeaked()).toBe(false);
  });
});
