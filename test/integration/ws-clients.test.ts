/**
 * Real client libraries over cascade's WebSocket side, against mock nodes on a manual chain:
 * @solana/web3.js v1 given only the HTTP URL (it finds the WebSocket at port + 1), @solana/kit,
 * viem's webSocket transport and ethers' WebSocketProvider.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Connection,
  Keypair,
  SystemProgram,
  Transaction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import { address, createSolanaRpcSubscriptions } from '@solana/kit';
import { createPublicClient, parseAbi, webSocket } from 'viem';
import { mainnet } from 'viem/chains';
import { WebSocketProvider } from 'ethers';
import { freePortPair } from '../support/free-port.js';
import { until } from '../support/ws-client.js';
import { startWsHarness, type WsHarness } from '../support/ws-harness.js';

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const ERC20 = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function balanceOf(address owner) view returns (uint256)',
]);

let harness: WsHarness | undefined;
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness?.close();
  harness = undefined;
});

/** Advances the chain a slot at a time until `promise` settles (the client waits on the chain). */
async function whileAdvancing<T>(promise: Promise<T>, advance: () => void): Promise<T> {
  let settled = false;
  void promise.finally(() => (settled = true)).catch(() => undefined);
  while (!settled) {
    advance();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return promise;
}

function subscriptions(): number {
  return Object.values(harness!.mocks).reduce(
    (sum, mock) => sum + mock.ws.stats().subscriptions,
    0,
  );
}

describe('@solana/web3.js v1 with only the HTTP URL', () => {
  it('gets slot, account and logs notifications, confirms a transaction, and releases on removal', async () => {
    const port = await freePortPair();
    harness = await startWsHarness([{ name: 'a' }, { name: 'b', tier: 1 }], {
      server: { port, wsPort: port + 1 },
    });
    const { chain } = harness;
    const connection = new Connection(harness.url, 'confirmed');
    const account = Keypair.generate().publicKey;
    const slots: number[] = [];
    const lamports: number[] = [];
    const logs: string[] = [];
    const slotListener = connection.onSlotChange((info) => slots.push(info.slot));
    const accountListener = connection.onAccountChange(account, (info) =>
      lamports.push(info.lamports),
    );
    const logsListener = connection.onLogs('all', (entry) => logs.push(entry.signature));
    await until(() => subscriptions() === 3);
    chain.advanceSlots(2);
    chain.setAccount(account.toBase58(), { lamports: 777 });
    await until(() => slots.length >= 2 && lamports.length >= 1);
    expect(slots[1]).toBe(slots[0]! + 1);
    expect(lamports).toEqual([777]);

    const payer = Keypair.generate();
    const transfer = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: account, lamports: 1000 }),
    );
    const signature = await whileAdvancing(
      sendAndConfirmTransaction(connection, transfer, [payer]),
      () => chain.advanceSlots(1),
    );
    await until(() => logs.includes(signature));

    await connection.removeSlotChangeListener(slotListener);
    await connection.removeAccountChangeListener(accountListener);
    await connection.removeOnLogsListener(logsListener);
    await until(() => subscriptions() === 0);
    expect(harness.cascade.ws.hub.counts()).toEqual({ shared: 0, clients: 0, upstream: 0 });
    // With no subscription left web3.js closes its socket by itself (1000: no reconnect).
    await until(() => harness!.cascade.ws.clients === 0);
  });
});

describe('@solana/kit', () => {
  it('iterates slot notifications and aborts cleanly, releasing the upstream subscription', async () => {
    harness = await startWsHarness([{ name: 'a' }]);
    const rpc = createSolanaRpcSubscriptions(harness.wsUrl);
    const abort = new AbortController();
    const stream = await rpc.slotNotifications().subscribe({ abortSignal: abort.signal });
    await until(() => subscriptions() === 1);
    harness.chain.advanceSlots(3);
    const seen: bigint[] = [];
    for await (const note of stream) {
      seen.push(note.slot);
      if (seen.length === 3) break;
    }
    abort.abort();
    expect(seen[2]! - seen[0]!).toBe(2n);
    const stop = new AbortController();
    const accounts = await rpc
      .accountNotifications(address('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'), {
        encoding: 'base64',
      })
      .subscribe({ abortSignal: stop.signal });
    await until(() => subscriptions() === 1);
    harness.chain.setAccount('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', { lamports: 5 });
    for await (const note of accounts) {
      expect(note.value.lamports).toBe(5n);
      break;
    }
    stop.abort();
    await until(() => subscriptions() === 0);
  });
});

describe('viem webSocket transport', () => {
  it('watches block numbers, blocks and contract events, and reads a contract', async () => {
    harness = await startWsHarness([{ name: 'a' }]);
    const client = createPublicClient({ chain: mainnet, transport: webSocket(harness.wsUrl) });
    cleanups.push(async () => (await client.transport.getRpcClient()).close());
    const numbers: bigint[] = [];
    const hashes: string[] = [];
    const transfers: bigint[] = [];
    const errors: unknown[] = [];
    const unwatch = [
      client.watchBlockNumber({
        onBlockNumber: (n) => numbers.push(n),
        onError: (e) => errors.push(e),
      }),
      client.watchBlocks({ onBlock: (b) => hashes.push(b.hash), onError: (e) => errors.push(e) }),
      client.watchContractEvent({
        address: USDC,
        abi: ERC20,
        eventName: 'Transfer',
        onLogs: (found) => transfers.push(...found.map((log) => log.blockNumber)),
        onError: (e) => errors.push(e),
      }),
    ];
    // Both newHeads watchers share one upstream subscription (the second gets its own id).
    await until(() => harness!.cascade.ws.hub.counts().clients === 3);
    expect(subscriptions()).toBe(2);
    harness.chain.advanceBlocks(2);
    await until(() => numbers.length >= 2 && hashes.length >= 2 && transfers.length >= 2);
    expect(numbers[1]).toBe(numbers[0]! + 1n);
    const balance = await client.readContract({
      address: USDC,
      abi: ERC20,
      functionName: 'balanceOf',
      args: ['0x0000000000000000000000000000000000000001'],
    });
    expect(balance).toBe(10n ** 18n);
    for (const stop of unwatch) stop();
    await until(() => subscriptions() === 0);
    expect(errors).toEqual([]);
  });
});

describe('ethers WebSocketProvider', () => {
  it("follows blocks and a log filter and reads the block number, with no 'error' event", async () => {
    harness = await startWsHarness([{ name: 'a' }]);
    const provider = new WebSocketProvider(harness.wsUrl);
    cleanups.push(() => provider.destroy());
    const errors: unknown[] = [];
    void provider.on('error', (e) => errors.push(e));
    const blocks: number[] = [];
    const logs: number[] = [];
    await provider.on('block', (n: number) => blocks.push(n));
    await provider.on({ address: USDC }, (log: { blockNumber: number }) =>
      logs.push(log.blockNumber),
    );
    await until(() => subscriptions() === 2);
    harness.chain.advanceBlocks(2);
    await until(() => blocks.length >= 2 && logs.length >= 2);
    expect(blocks[1]).toBe(blocks[0]! + 1);
    expect(await provider.getBlockNumber()).toBe(harness.chain.blockNumber());
    expect(errors).toEqual([]);
  });
});
