/**
 * Two chains on one proxy (issue 28): Solana mock nodes at /solana and a real EVM node
 * (anvil) at /eth. Each path reaches only its own nodes, over HTTP, batches and WebSocket,
 * and real client libraries work pointed at the chain's URL.
 */
import { Connection } from '@solana/web3.js';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http } from 'viem';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { anvilUnavailable, startAnvil, type Anvil } from '../support/anvil.js';
import { startMultiChain, type MultiChain } from '../support/multi-chain.js';

const noAnvil = anvilUnavailable();
let harness: MultiChain | undefined;
let anvil: Anvil | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await anvil?.stop();
  anvil = undefined;
});

const rpc = (method: string, id: number, params: unknown[] = []) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** One request over a WebSocket to `url`; its answer. */
async function wsCall(url: string, body: unknown): Promise<unknown> {
  const socket = new WebSocket(url);
  try {
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answer = new Promise<unknown>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))),
    );
    socket.send(JSON.stringify(body));
    return await answer;
  } finally {
    socket.close();
  }
}

async function twoChains(): Promise<MultiChain> {
  anvil = await startAnvil(['--chain-id', '8453']);
  return startMultiChain([
    {
      name: 'solana',
      nodes: [{ name: 'sol-a' }, { name: 'sol-b', toml: 'tier = 1\nmonthly_limit = 0' }],
    },
    {
      name: 'eth',
      toml: 'paths = ["/eth", "/base"]',
      nodes: [
        { name: 'anvil', url: anvil.url },
        { name: 'eth-backup', toml: 'tier = 1\nmonthly_limit = 0' },
      ],
    },
  ]);
}

describe.skipIf(noAnvil !== undefined)('two chains on one proxy', () => {
  beforeAll(() => {
    if (noAnvil !== undefined) console.warn(`skipped: ${noAnvil}`);
  });

  it('sends each path only to its own nodes, over HTTP, batches and WebSocket', async () => {
    harness = await twoChains();
    const { mocks } = harness;
    const slot = await harness.post('/solana', rpc('getSlot', 1));
    expect(slot.status).toBe(200);
    expect(typeof (slot.json as { result: unknown }).result).toBe('number');
    const chainId = await harness.post('/eth', rpc('eth_chainId', 2));
    expect(chainId.json).toEqual({ jsonrpc: '2.0', id: 2, result: '0x2105' });
    // Every path of the chain, and /send-request under it.
    expect((await harness.post('/base/send-request', rpc('eth_chainId', 3))).json).toMatchObject({
      result: '0x2105',
    });
    const batch = await harness.post('/eth', [rpc('eth_chainId', 4), rpc('net_version', 5)]);
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 4, result: '0x2105' },
      { jsonrpc: '2.0', id: 5, result: '8453' },
    ]);
    const solBatch = await harness.post('/solana/send-request', [
      rpc('getSlot', 6),
      rpc('getBlockHeight', 7),
    ]);
    expect((solBatch.json as unknown[]).length).toBe(2);
    const ws = harness.url.replace('http', 'ws');
    expect(await wsCall(`${ws}/eth`, rpc('eth_chainId', 8))).toEqual({
      jsonrpc: '2.0',
      id: 8,
      result: '0x2105',
    });
    expect(await wsCall(`${ws}/solana`, rpc('getSlot', 9))).toMatchObject({ id: 9 });
    // The Solana mocks never saw an EVM call, the EVM backup saw nothing at all.
    expect(mocks['sol-a']!.stats().byMethod).toEqual({ getSlot: 3, getBlockHeight: 1 });
    expect(mocks['sol-b']!.stats().requests).toBe(0);
    expect(mocks['eth-backup']!.stats().requests).toBe(0);
  });

  it('answers a path no chain serves with 404 and the chains it does serve', async () => {
    harness = await twoChains();
    const answer = await harness.post('/polygon', rpc('eth_chainId', 1));
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({
      jsonrpc: '2.0',
      // The request's own id, as with every error cascade writes itself.
      id: 1,
      error: {
        code: -32600,
        message:
          'no chain is served at /polygon; chains are served at solana: /solana; eth: /eth, /base',
      },
    });
    const batch = await harness.post('/polygon', [
      { ...rpc('eth_chainId', 1), id: 'a' },
      rpc('eth_chainId', 2),
    ]);
    expect(batch.status).toBe(404);
    expect(batch.json).toMatchObject([
      { id: 'a', error: { code: -32600 } },
      { id: 2, error: { code: -32600 } },
    ]);
    // A client key in a mistyped path never comes back in the error; a long path is cut.
    const key = 'ck_0123456789abcdefABCDEF-._~xyz';
    const typo = await harness.post(`/eth/${key}/typo`, rpc('eth_chainId', 3));
    expect(typo.status).toBe(404);
    expect(JSON.stringify(typo.json)).not.toContain(key);
    expect((typo.json as { error: { message: string } }).error.message).toMatch(
      /^no chain is served at \/eth\/\*\*\*\/typo;/,
    );
    const long = await harness.post(`/${'a'.repeat(10_000)}`, rpc('eth_chainId', 4));
    expect(JSON.stringify(long.json).length).toBeLessThan(1000);
    const garbage = await harness.post('/polygon', 'not json');
    expect(garbage.json).toMatchObject({ id: null, error: { code: -32600 } });
    // The root is no chain's path either, and a WebSocket upgrade there is refused alike.
    expect((await harness.post('/', rpc('getSlot', 1))).status).toBe(404);
    const refused = new WebSocket(`${harness.url.replace('http', 'ws')}/polygon`);
    const status = await new Promise<number>((resolve) =>
      refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(404);
  });

  it('serves real clients pointed at each chain URL', async () => {
    harness = await twoChains();
    const connection = new Connection(`${harness.url}/solana`, 'confirmed');
    expect(await connection.getSlot()).toBeGreaterThan(0);
    const viem = createPublicClient({ transport: http(`${harness.url}/eth`) });
    expect(await viem.getChainId()).toBe(8453);
    const provider = new JsonRpcProvider(`${harness.url}/base`, undefined, {
      staticNetwork: true,
    });
    expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(0);
    provider.destroy();
    expect(harness.mocks['eth-backup']!.stats().requests).toBe(0);
  });

  it('keeps each chain its own cache and coalescing', async () => {
    anvil = await startAnvil();
    harness = await startMultiChain([
      { name: 'a', toml: '[chains.cache]\nenabled = true', nodes: [{ name: 'a1' }] },
      { name: 'b', toml: '[chains.cache]\nenabled = true', nodes: [{ name: 'b1' }] },
    ]);
    // The same final request on both chains: each chain's node answers it once.
    for (let i = 0; i < 3; i++) {
      await harness.post('/a', rpc('getGenesisHash', i));
      await harness.post('/b', rpc('getGenesisHash', i));
    }
    expect(harness.mocks.a1!.stats().byMethod).toEqual({ getGenesisHash: 1 });
    expect(harness.mocks.b1!.stats().byMethod).toEqual({ getGenesisHash: 1 });
  });
});

describe('client keys on several chains', () => {
  const SCOPED = 'ck_scopedkey_0123456789abcdef';
  const OPEN = 'ck_openkey_0123456789abcdefgh';

  async function keyed(): Promise<MultiChain> {
    const { keyHash } = await import('../../src/core/config/keys-section.js');
    return startMultiChain(
      [
        { name: 'solana', nodes: [{ name: 'sol-1' }] },
        { name: 'eth', nodes: [{ name: 'eth-1' }] },
      ],
      {
        // Right after [server]'s own lines: require_key is a [server] key.
        top:
          `require_key = true\n[[keys]]\nname = "sol-only"\nkey_sha256 = "${keyHash(SCOPED)}"\nchains = ["solana"]\n` +
          `[[keys]]\nname = "any"\nkey_sha256 = "${keyHash(OPEN)}"\n`,
      },
    );
  }

  it('takes the key in each chain’s path and refuses a key on a chain it is not scoped to', async () => {
    harness = await keyed();
    const h = harness;
    expect((await h.post(`/solana/${SCOPED}`, rpc('getSlot', 1))).status).toBe(200);
    expect((await h.post(`/solana/${SCOPED}/send-request`, rpc('getSlot', 2))).status).toBe(200);
    expect((await h.post(`/eth/${OPEN}`, rpc('eth_blockNumber', 3))).status).toBe(200);
    const refused = await h.post(`/eth/${SCOPED}`, [rpc('eth_blockNumber', 4)]);
    expect(refused.status).toBe(403);
    // A batch refused whole for its key is answered as a batch, element by element.
    expect(refused.json).toMatchObject([
      {
        id: 4,
        error: {
          code: -32001,
          message:
            "Key 'sol-only' may not be used on chain 'eth'; it is scoped to solana (keys.chains)",
        },
      },
    ]);
    // No key on a chain path is refused like anywhere else.
    expect((await h.post('/eth', rpc('eth_blockNumber', 5))).status).toBe(401);
    // The WebSocket upgrade on the other chain is refused too, before any node is asked.
    const socket = new WebSocket(`${h.url.replace('http', 'ws')}/eth/${SCOPED}`);
    const status = await new Promise<number>((resolve) =>
      socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(403);
    expect(
      await wsCall(`${h.url.replace('http', 'ws')}/solana/${SCOPED}`, rpc('getSlot', 6)),
    ).toMatchObject({
      id: 6,
    });
    expect(h.mocks['eth-1']!.stats().requests).toBe(1);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toContain('rpc_key_requests_total{key="sol-only",outcome="chain"} 2');
  });
});
