/** Transactions accepted like real nodes: real hashes and signatures, a mempool, "already known". */
import {
  Connection,
  Keypair,
  SendTransactionError,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import {
  JsonRpcProvider,
  Network,
  Wallet,
  encodeBase58,
  keccak256 as ethersKeccak256,
} from 'ethers';
import { Agent, request } from 'undici';
import { createWalletClient, http, keccak256 as viemKeccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mainnet } from 'viem/chains';
import { afterEach, describe, expect, it } from 'vitest';
import { ALREADY_KNOWN, EVM_CLIENTS, MockMempool, startMockNodes, type MockNode } from './index.js';

const PRIVATE_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = privateKeyToAccount(PRIVATE_KEY);

let nodes: MockNode[] = [];
let agent: Agent | undefined;
afterEach(async () => {
  // Nodes first: closing them cuts off answers still pending, which agent.close() would await.
  await Promise.all(nodes.map((node) => node.close()));
  nodes = [];
  await agent?.close();
  agent = undefined;
});

async function start(...options: Parameters<typeof startMockNodes>[0]): Promise<MockNode[]> {
  const started = await startMockNodes(options);
  nodes.push(...started);
  return started;
}

async function rpc(
  node: MockNode,
  method: string,
  params: unknown[],
): Promise<Record<string, unknown>> {
  agent ??= new Agent({ connections: 8 });
  const res = await request(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    dispatcher: agent,
  });
  return (await res.body.json()) as Record<string, unknown>;
}

function signedEvm(nonce: number): Promise<Hex> {
  return account.signTransaction({
    chainId: 1,
    nonce,
    to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: parseGwei('30'),
    maxPriorityFeePerGas: parseGwei('1'),
  });
}

function signedSolana(): Transaction {
  const payer = Keypair.generate();
  const tx = new Transaction({
    feePayer: payer.publicKey,
    recentBlockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N',
  }).add(
    SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 1000,
    }),
  );
  tx.sign(payer);
  return tx;
}

describe('eth_sendRawTransaction', () => {
  it("answers the transaction's keccak-256 hash, as viem and ethers compute it", async () => {
    const [node] = await start({ name: 'evm' });
    const raw = await signedEvm(1);
    const client = createWalletClient({ chain: mainnet, transport: http(node!.url) });
    const hash = await client.sendRawTransaction({ serializedTransaction: raw });
    expect(hash).toBe(viemKeccak256(raw));
    expect(hash).toBe(ethersKeccak256(raw));
    expect(node!.accepted()).toEqual([{ chain: 'evm', id: hash, node: 'evm' }]);
    expect(node!.stats()).toMatchObject({ accepted: 1, alreadyKnown: 0 });
  });

  it('lets ethers broadcast a signed transaction (ethers checks the hash it gets back)', async () => {
    const [node] = await start({ name: 'evm' });
    const network = Network.from(1);
    const provider = new JsonRpcProvider(node!.url, network, { staticNetwork: network });
    try {
      const raw = await new Wallet(PRIVATE_KEY).signTransaction({
        chainId: 1,
        nonce: 3,
        to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
        gasLimit: 21_000n,
        gasPrice: parseGwei('20'),
      });
      const sent = await provider.broadcastTransaction(raw);
      expect(sent.hash).toBe(ethersKeccak256(raw));
    } finally {
      provider.destroy();
    }
  });

  it.each(EVM_CLIENTS)("answers a resubmission with %s's already-known error", async (client) => {
    const [node] = await start({ name: 'evm', evmClient: client });
    const raw = await signedEvm(2);
    expect(await rpc(node!, 'eth_sendRawTransaction', [raw])).toMatchObject({
      result: viemKeccak256(raw),
    });
    expect(await rpc(node!, 'eth_sendRawTransaction', [raw])).toEqual({
      jsonrpc: '2.0',
      error: ALREADY_KNOWN[client],
      id: 1,
    });
    expect(node!.stats()).toMatchObject({ accepted: 1, alreadyKnown: 1 });
  });

  it('answers malformed hex as geth does', async () => {
    const [node] = await start({ name: 'evm' });
    expect(await rpc(node!, 'eth_sendRawTransaction', ['02f8'])).toMatchObject({
      error: {
        code: -32602,
        message:
          'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Bytes',
      },
    });
    expect(await rpc(node!, 'eth_sendRawTransaction', ['0x02f'])).toMatchObject({
      error: {
        code: -32602,
        message: expect.stringContaining('hex string of odd length') as unknown,
      },
    });
    expect(await rpc(node!, 'eth_sendRawTransaction', ['0x'])).toMatchObject({
      error: { code: -32000, message: 'typed transaction too short' },
    });
  });
});

describe('a mempool shared by several nodes', () => {
  it('node A accepts the transaction, then B and C answer "already known"', async () => {
    const mempool = new MockMempool();
    const [a, b, c] = await start(
      { name: 'A', mempool },
      { name: 'B', mempool, evmClient: 'erigon' },
      { name: 'C', mempool, evmClient: 'nethermind' },
    );
    const raw = await signedEvm(9);
    expect(await rpc(a!, 'eth_sendRawTransaction', [raw])).toMatchObject({
      result: viemKeccak256(raw),
    });
    expect(await rpc(b!, 'eth_sendRawTransaction', [raw])).toMatchObject({
      error: ALREADY_KNOWN.erigon,
    });
    expect(await rpc(c!, 'eth_sendRawTransaction', [raw])).toMatchObject({
      error: ALREADY_KNOWN.nethermind,
    });
    expect(a!.accepted()).toHaveLength(1);
    expect(b!.accepted()).toEqual([]);
    expect(mempool.accepted()).toEqual([{ chain: 'evm', id: viemKeccak256(raw), node: 'A' }]);
    expect(b!.mempool).toBe(mempool);
  });

  it('a slow node has accepted the transaction before its late answer', async () => {
    const mempool = new MockMempool();
    const [slow, fast] = await start(
      { name: 'slow', mempool, delayMs: 60_000 },
      { name: 'fast', mempool },
    );
    const raw = await signedEvm(11);
    // The slow node's answer never comes within the test; close() in afterEach cuts it off.
    rpc(slow!, 'eth_sendRawTransaction', [raw]).catch(() => undefined);
    while (!mempool.has('evm', viemKeccak256(raw)))
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await rpc(fast!, 'eth_sendRawTransaction', [raw])).toMatchObject({
      error: ALREADY_KNOWN.geth,
    });
    expect(slow!.accepted()).toEqual([{ chain: 'evm', id: viemKeccak256(raw), node: 'slow' }]);
  });

  it('is bounded: the oldest transaction is forgotten first', () => {
    const mempool = new MockMempool({ capacity: 2 });
    expect(mempool.admit('evm', '0x01', 'n')).toBe(true);
    expect(mempool.admit('evm', '0x01', 'n')).toBe(false);
    mempool.admit('evm', '0x02', 'n');
    mempool.admit('solana', 'sig', 'n');
    expect(mempool.accepted().map((entry) => entry.id)).toEqual(['0x02', 'sig']);
    expect(mempool.has('evm', '0x01')).toBe(false);
    expect(() => new MockMempool({ capacity: 0 })).toThrow(/capacity = 0/);
  });

  it('nodes keep separate mempools unless given one', async () => {
    const [a, b] = await start({ name: 'A' }, { name: 'B' });
    const raw = await signedEvm(10);
    await rpc(a!, 'eth_sendRawTransaction', [raw]);
    expect(await rpc(b!, 'eth_sendRawTransaction', [raw])).toHaveProperty('result');
  });
});

describe('sendTransaction (Solana)', () => {
  it('answers the first signature; a resubmission gets agave AlreadyProcessed', async () => {
    const [node] = await start({ name: 'sol' });
    const connection = new Connection(node!.url, 'confirmed');
    const tx = signedSolana();
    const signature = await connection.sendRawTransaction(tx.serialize());
    expect(signature).toBe(encodeBase58(tx.signature!));
    const again = connection.sendRawTransaction(tx.serialize());
    await expect(again).rejects.toBeInstanceOf(SendTransactionError);
    await expect(again).rejects.toThrow(/This transaction has already been processed/);
    expect(node!.accepted()).toEqual([{ chain: 'solana', id: signature, node: 'sol' }]);
  });

  it('answers the signature again with skipPreflight, as agave skips the simulation', async () => {
    const [node] = await start({ name: 'sol' });
    const wire = signedSolana().serialize().toString('base64');
    const params = [wire, { encoding: 'base64', skipPreflight: true }];
    const first = await rpc(node!, 'sendTransaction', params);
    expect(await rpc(node!, 'sendTransaction', params)).toEqual(first);
    expect(node!.stats()).toMatchObject({ accepted: 1, alreadyKnown: 0 });
  });

  it('refuses a wire transaction that does not decode, and an unknown encoding', async () => {
    const [node] = await start({ name: 'sol' });
    expect(await rpc(node!, 'sendTransaction', ['3mJr7AoUXx2Wqd'])).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('failed to deserialize') as unknown },
    });
    expect(await rpc(node!, 'sendTransaction', ['AA==', { encoding: 'json' }])).toMatchObject({
      error: {
        code: -32602,
        message: 'unsupported encoding: json. Supported encodings: base58, base64',
      },
    });
  });
});
