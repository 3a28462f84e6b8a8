/**
 * Real clients sending signed transactions through cascade, on the hardest path: the first
 * node takes the transaction and stalls past its deadline, the next one already has it.
 * viem, ethers (which batches the send with eth_blockNumber and checks the hash it gets back)
 * and @solana/web3.js must each get their transaction's own hash / signature.
 */
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import {
  JsonRpcProvider,
  Network,
  Wallet,
  encodeBase58,
  keccak256 as ethersKeccak256,
} from 'ethers';
import { createWalletClient, http, keccak256 as viemKeccak256, parseGwei } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mainnet } from 'viem/chains';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { MockMempool, type TransactionChain } from '../../src/mock/index.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

const PRIVATE_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const ATTEMPT_TIMEOUT_MS = 500;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(): Promise<{ h: Harness; clock: ManualClock; mempool: MockMempool }> {
  const clock = new ManualClock();
  const mempool = new MockMempool();
  harness = await startHarness(
    [
      { name: 'accepts', tier: 0, mock: { mempool, delayMs: 60_000 } },
      { name: 'knows', tier: 1, mock: { mempool } },
    ],
    { clock, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, budgetMs: 1000 },
  );
  return { h: harness, clock, mempool };
}

/** Once the first node holds a transaction of `chain`, lets its attempt run out. */
async function stallFirst(clock: ManualClock, mempool: MockMempool, chain: TransactionChain) {
  while (!mempool.accepted('accepts').some((tx) => tx.chain === chain)) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
}

describe('signed transactions from real clients through cascade', () => {
  it('viem sendRawTransaction gets the hash viem computes', async () => {
    const { h, clock, mempool } = await start();
    const raw = await privateKeyToAccount(PRIVATE_KEY).signTransaction({
      chainId: 1,
      nonce: 1,
      to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: parseGwei('30'),
      maxPriorityFeePerGas: parseGwei('1'),
    });
    const client = createWalletClient({
      chain: mainnet,
      transport: http(h.url, { retryCount: 0 }),
    });
    const sent = client.sendRawTransaction({ serializedTransaction: raw });
    await stallFirst(clock, mempool, 'evm');
    expect(await sent).toBe(viemKeccak256(raw));
    expect(h.mocks.knows!.stats().alreadyKnown).toBe(1);
  });

  it('ethers broadcastTransaction (batched with eth_blockNumber) gets the hash ethers checks', async () => {
    const { h, clock, mempool } = await start();
    const network = Network.from(1);
    const provider = new JsonRpcProvider(h.url, network, { staticNetwork: network });
    try {
      const raw = await new Wallet(PRIVATE_KEY).signTransaction({
        chainId: 1,
        nonce: 2,
        to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
        gasLimit: 21_000n,
        gasPrice: parseGwei('20'),
      });
      const sent = provider.broadcastTransaction(raw);
      await stallFirst(clock, mempool, 'evm');
      expect((await sent).hash).toBe(ethersKeccak256(raw));
      expect(h.mocks.knows!.stats().alreadyKnown).toBe(1);
    } finally {
      provider.destroy();
    }
  });

  it('@solana/web3.js sendRawTransaction gets the signature web3.js signed', async () => {
    const { h, clock, mempool } = await start();
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
    const connection = new Connection(h.url, 'confirmed');
    const sent = connection.sendRawTransaction(tx.serialize());
    await stallFirst(clock, mempool, 'solana');
    expect(await sent).toBe(encodeBase58(tx.signature!));
    expect(h.mocks.knows!.stats().alreadyKnown).toBe(1);
  });
});
