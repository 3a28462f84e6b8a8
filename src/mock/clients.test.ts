import {
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  VersionedTransaction,
  TransactionMessage,
} from '@solana/web3.js';
import { JsonRpcProvider, Network } from 'ethers';
import { createPublicClient, http, parseAbi, type Address, type Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { base58Encode } from './encoding.js';
import { startMockNode, type MockNode } from './index.js';

let node: MockNode;
beforeEach(async () => {
  node = await startMockNode({ name: 'clients' });
});
afterEach(async () => {
  await node.close();
});

const TOKEN_PROGRAM = new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
const USDC_MINT = new PublicKey('EPjFWJd5Wt1tvgAUXhKuB1gd7aEyA2LvqfuC4Gy3pGUk');

describe('@solana/web3.js Connection against a mock node', () => {
  it('reads chain state', async () => {
    const connection = new Connection(node.url, 'confirmed');
    const owner = Keypair.generate().publicKey;
    expect(await connection.getSlot()).toBeGreaterThan(0);
    expect(await connection.getBlockHeight()).toBeGreaterThan(0);
    expect(await connection.getBalance(owner)).toBe(2_500_000_000);
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
    expect(new PublicKey(blockhash).toBytes()).toHaveLength(32);
    expect(lastValidBlockHeight).toBeGreaterThan(0);
    const account = await connection.getAccountInfo(owner);
    expect(account?.owner.equals(SystemProgram.programId)).toBe(true);
    expect(account?.data).toBeInstanceOf(Buffer);
    const many = await connection.getMultipleAccountsInfo([owner, TOKEN_PROGRAM]);
    expect(many).toHaveLength(2);
    expect((await connection.getVersion())['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);
    const epoch = await connection.getEpochInfo();
    expect(epoch.slotsInEpoch).toBe(432_000);
    expect(await connection.getGenesisHash()).toBe('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
    expect(await connection.getMinimumBalanceForRentExemption(0)).toBe(890_880);
    expect(await connection.getBlockTime(epoch.absoluteSlot)).toBeGreaterThan(1_600_000_000);
    const fees = await connection.getRecentPrioritizationFees();
    expect(fees.length).toBeGreaterThan(0);
    expect((await connection.isBlockhashValid(blockhash)).value).toBe(true);
  });

  it('reads accounts, signatures and transactions', async () => {
    const connection = new Connection(node.url, 'confirmed');
    const owner = Keypair.generate().publicKey;
    const programAccounts = await connection.getProgramAccounts(TOKEN_PROGRAM);
    expect(programAccounts.length).toBeGreaterThan(0);
    expect(programAccounts[0]!.account.owner.equals(TOKEN_PROGRAM)).toBe(true);
    const tokens = await connection.getTokenAccountsByOwner(owner, { mint: USDC_MINT });
    expect(tokens.value.length).toBeGreaterThan(0);
    const parsed = await connection.getParsedTokenAccountsByOwner(owner, { mint: USDC_MINT });
    expect(parsed.value[0]!.account.data.parsed).toMatchObject({ type: 'account' });
    const signatures = await connection.getSignaturesForAddress(owner, { limit: 5 });
    expect(signatures).toHaveLength(5);
    const tx = await connection.getTransaction(signatures[0]!.signature, {
      maxSupportedTransactionVersion: 0,
    });
    expect(tx?.meta?.fee).toBe(5000);
    expect(tx?.transaction.message.staticAccountKeys).toHaveLength(3);
    const statuses = await connection.getSignatureStatuses([signatures[0]!.signature]);
    expect(statuses.value[0]?.confirmationStatus).toBe('finalized');
  });

  it('simulates and sends a transaction, echoing its signature', async () => {
    const connection = new Connection(node.url, 'confirmed');
    const payer = Keypair.generate();
    const { blockhash } = await connection.getLatestBlockhash();
    const transfer = SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 1000,
    });
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [transfer],
    }).compileToV0Message();
    const versioned = new VersionedTransaction(message);
    versioned.sign([payer]);
    const simulation = await connection.simulateTransaction(versioned);
    expect(simulation.value.err).toBeNull();
    expect((await connection.getFeeForMessage(message)).value).toBe(5000);
    const legacy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      transfer,
    );
    legacy.sign(payer);
    const signature = await connection.sendRawTransaction(legacy.serialize());
    expect(signature).toBe(base58Encode(legacy.signature!));
  });
});

describe('viem public client against a mock node', () => {
  const address: Address = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

  it('reads chain state, blocks, receipts and logs', async () => {
    const client = createPublicClient({ transport: http(node.url) });
    expect(await client.getChainId()).toBe(1);
    const head = await client.getBlockNumber();
    expect(head).toBeGreaterThan(20_000_000n);
    expect(await client.getBalance({ address })).toBe(10n ** 18n);
    const block = await client.getBlock();
    expect(block.number).toBe(head);
    expect(block.transactions).toHaveLength(3);
    const full = await client.getBlock({ blockNumber: head - 1n, includeTransactions: true });
    expect(full.transactions[0]!.type).toBe('eip1559');
    expect(await client.getGasPrice()).toBeGreaterThan(0n);
    expect(await client.estimateGas({ account: address, to: address, value: 1n })).toBe(21_000n);
    const hash = full.transactions[0]!.hash;
    const receipt = await client.getTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.transactionHash).toBe(hash);
    expect((await client.getTransaction({ hash })).hash).toBe(hash);
    const logs = await client.getLogs({ fromBlock: head - 10n, toBlock: head });
    expect(logs.length).toBeGreaterThan(0);
    const fees = await client.estimateFeesPerGas();
    expect(fees.maxFeePerGas).toBeGreaterThan(fees.maxPriorityFeePerGas);
    const history = await client.getFeeHistory({ blockCount: 4, rewardPercentiles: [25, 75] });
    expect(history.baseFeePerGas).toHaveLength(5);
    expect(await client.getTransactionCount({ address })).toBe(42);
    expect(await client.getCode({ address })).toMatch(/^0x60/);
    const balance = await client.readContract({
      address,
      abi: parseAbi(['function balanceOf(address) view returns (uint256)']),
      functionName: 'balanceOf',
      args: [address],
    });
    expect(balance).toBe(10n ** 18n);
    const sent: Hex = await client.request({
      method: 'eth_sendRawTransaction',
      params: ['0x02f86c0180843b9aca00'],
    });
    expect(sent).toMatch(/^0x[0-9a-f]{64}$/);
  });
});

describe('ethers JsonRpcProvider against a mock node', () => {
  it('reads the block number, balances and blocks (batched requests)', async () => {
    const network = Network.from(1);
    const provider = new JsonRpcProvider(node.url, network, { staticNetwork: network });
    try {
      const [blockNumber, balance] = await Promise.all([
        provider.getBlockNumber(),
        provider.getBalance('0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'),
      ]);
      expect(blockNumber).toBeGreaterThan(20_000_000);
      expect(balance).toBe(10n ** 18n);
      const block = await provider.getBlock('latest');
      expect(block?.number).toBe(blockNumber);
      expect((await provider.getFeeData()).gasPrice).toBeGreaterThan(0n);
      expect(node.stats().byMethod.eth_blockNumber).toBeGreaterThanOrEqual(1);
    } finally {
      provider.destroy();
    }
  });
});
