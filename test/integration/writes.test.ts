/**
 * Writes seen from a client: a transaction that may have landed is never resent blindly nor
 * reported as failed. The proxy runs on a ManualClock: "the first node stalls past its
 * deadline" is the test moving the clock once the node has taken the transaction.
 */
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { encodeBase58, keccak256 as ethersKeccak256 } from 'ethers';
import { keccak256 as viemKeccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { RoutingConfig } from '../../src/core/config/types.js';
import { WRITE_UNCONFIRMED_MESSAGE } from '../../src/core/protocol/error-body.js';
import { ALREADY_KNOWN, EVM_CLIENTS, MockMempool, type EvmClient } from '../../src/mock/index.js';
import { rpc, startHarness, type Harness, type TestNode } from '../support/proxy-harness.js';
import { metricValue, routingWith } from '../support/routing-config.js';

const PRIVATE_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = privateKeyToAccount(PRIVATE_KEY);
const ATTEMPT_TIMEOUT_MS = 500;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

let nonce = 0;
function signedEvm(): Promise<Hex> {
  return account.signTransaction({
    chainId: 1,
    nonce: nonce++,
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

async function start(
  nodes: TestNode[],
  routing?: RoutingConfig,
): Promise<{ h: Harness; clock: ManualClock }> {
  const clock = new ManualClock();
  harness = await startHarness(nodes, {
    clock,
    routing,
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    budgetMs: 1000,
  });
  return { h: harness, clock };
}

/**
 * Tier 0 takes the transaction into the shared mempool and then stalls far past the attempt
 * deadline; tier 1 shares the mempool (a provider that already has it) and answers as `client`.
 */
function acceptThenKnow(mempool: MockMempool, evmClient: EvmClient = 'geth'): TestNode[] {
  return [
    { name: 'accepts', tier: 0, mock: { mempool, delayMs: 60_000 } },
    { name: 'knows', tier: 1, mock: { mempool, evmClient } },
  ];
}

/** Waits until a mock node holds `id` (it got the transaction), on events, not on time. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

async function statusOf(h: Harness, node: string): Promise<string | undefined> {
  return (await h.health()).nodes.find((n) => n.name === node)?.status;
}

describe('a write whose first attempt may have landed', () => {
  it.each(EVM_CLIENTS)(
    'eth_sendRawTransaction: %s says "already known" → the client gets the hash',
    async (client) => {
      const mempool = new MockMempool();
      const { h, clock } = await start(acceptThenKnow(mempool, client));
      const raw = await signedEvm();
      const reply = h.post(rpc('eth_sendRawTransaction', 7, [raw]));
      await until(() => mempool.has('evm', viemKeccak256(raw)));
      await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
      const answer = await reply;
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ jsonrpc: '2.0', id: 7, result: viemKeccak256(raw) });
      expect(viemKeccak256(raw)).toBe(ethersKeccak256(raw));
      // Nobody is penalized: "already known" is a true answer, and it shows the first node
      // delivered the transaction (late).
      expect(h.mocks.knows!.stats()).toMatchObject({ alreadyKnown: 1 });
      expect(await statusOf(h, 'knows')).not.toBe('down');
      expect(await statusOf(h, 'accepts')).not.toBe('down');
      const text = await h.metrics();
      expect(
        metricValue(text, 'cascade_write_outcomes_total', { outcome: 'already_known_as_success' }),
      ).toBe(1);
      expect(
        metricValue(text, 'rpc_upstream_attempts_total', {
          node: 'knows',
          outcome: 'retryable_rpc_error',
        }),
      ).toBe(0);
      // ALREADY_KNOWN is the mock's copy of each client's message, spelled as in its source.
      expect(ALREADY_KNOWN[client].message).toBeTruthy();
    },
  );

  it('sendTransaction: agave says "already processed" → the client gets the signature', async () => {
    const mempool = new MockMempool();
    const { h, clock } = await start(acceptThenKnow(mempool));
    const tx = signedSolana();
    const signature = encodeBase58(tx.signature!);
    const wire = tx.serialize().toString('base64');
    const reply = h.post(rpc('sendTransaction', 'a', [wire, { encoding: 'base64' }]));
    await until(() => mempool.has('solana', signature));
    await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
    const answer = await reply;
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: 'a', result: signature });
    expect(h.mocks.knows!.stats()).toMatchObject({ alreadyKnown: 1 });
    expect(await statusOf(h, 'knows')).not.toBe('down');
    expect(await statusOf(h, 'accepts')).not.toBe('down');
  });

  it('relays "already known" as it came when no earlier attempt of the request was sent', async () => {
    const mempool = new MockMempool();
    const { h } = await start([{ name: 'knows', tier: 0, mock: { mempool } }]);
    const raw = await signedEvm();
    mempool.admit('evm', viemKeccak256(raw), 'another-client');
    const answer = await h.post(rpc('eth_sendRawTransaction', 1, [raw]));
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: 1, error: ALREADY_KNOWN.geth });
  });

  it('does not resend a write it cannot identify: 502 "not confirmed", the next node never sees it', async () => {
    const { h, clock } = await start([
      { name: 'accepts', tier: 0, mock: { delayMs: 60_000 } },
      { name: 'other', tier: 1 },
    ]);
    const reply = h.post(rpc('eth_sendTransaction', 3, [{ from: account.address }]));
    await until(() => h.mocks.accepts!.stats().requests === 1);
    await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
    const answer = await reply;
    expect(answer.status).toBe(502);
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: WRITE_UNCONFIRMED_MESSAGE },
      id: 3,
    });
    expect(h.mocks.other!.stats().requests).toBe(0);
    expect(
      metricValue(await h.metrics(), 'cascade_write_outcomes_total', { outcome: 'failed' }),
    ).toBe(1);
  });
});

describe('a write no node confirmed', () => {
  it('a signed transaction that may have landed is "not confirmed", never "all nodes failed"', async () => {
    const { h, clock } = await start([
      { name: 'accepts', tier: 0, mock: { delayMs: 60_000 } },
      { name: 'gone', tier: 1, dead: true },
    ]);
    const raw = await signedEvm();
    const reply = h.post(rpc('eth_sendRawTransaction', 4, [raw]));
    await until(() => h.mocks.accepts!.stats().accepted === 1);
    await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
    const answer = await reply;
    expect(answer.status).toBe(502);
    expect(answer.json).toMatchObject({ error: { message: WRITE_UNCONFIRMED_MESSAGE }, id: 4 });
  });
});

describe('a write that surely did not reach its node', () => {
  it.each([
    ['the connection is refused', { name: 'first', tier: 0, dead: true }],
    [
      'it answers 503',
      { name: 'first', tier: 0, mock: { fault: { kind: 'http', status: 503, body: 'busy' } } },
    ],
    [
      'it answers 429',
      { name: 'first', tier: 0, mock: { fault: { kind: 'http', status: 429, body: '' } } },
    ],
    [
      'it says it is behind (it refused the write)',
      {
        name: 'first',
        tier: 0,
        mock: {
          methodErrors: Object.fromEntries(
            ['eth_sendRawTransaction', 'eth_sendTransaction'].map((m) => [
              m,
              { code: -32005, message: 'Node is behind by 42 slots' },
            ]),
          ),
        },
      },
    ],
  ] as Array<[string, TestNode]>)('goes to the next node when %s', async (_case, first) => {
    const { h } = await start([first, { name: 'next', tier: 1 }]);
    const raw = await signedEvm();
    const signed = await h.post(rpc('eth_sendRawTransaction', 1, [raw]));
    expect(signed.json).toEqual({ jsonrpc: '2.0', id: 1, result: viemKeccak256(raw) });
    // Even a write cascade cannot identify: nothing was delivered, so resending is safe.
    const unsigned = await h.post(rpc('eth_sendTransaction', 2, [{ from: account.address }]));
    expect(unsigned.status).toBe(200);
    expect(h.mocks.next!.stats().byMethod).toMatchObject({
      eth_sendRawTransaction: 1,
      eth_sendTransaction: 1,
    });
  });
});

describe('broadcast', () => {
  it('sends a write to the 3 best nodes at once, answers once, books each', async () => {
    const routing = routingWith({ sendTransaction: { strategy: 'latency', broadcast: 3 } });
    const { h } = await start(
      [
        { name: 'a', tier: 0 },
        { name: 'b', tier: 1 },
        { name: 'c', tier: 2 },
        { name: 'd', tier: 3 },
      ],
      routing,
    );
    const tx = signedSolana();
    const wire = tx.serialize().toString('base64');
    const answer = await h.post(rpc('sendTransaction', 9, [wire, { encoding: 'base64' }]));
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: 9, result: encodeBase58(tx.signature!) });
    await until(() => ['a', 'b', 'c'].every((n) => h.mocks[n]!.stats().accepted === 1));
    expect(h.mocks.d!.stats().requests).toBe(0);
    for (const node of ['a', 'b', 'c']) expect(h.ledger.counter(node).used).toBe(1);
    await until(() => h.server.topology.table.all.every((node) => node.permits.inFlight === 0));
    const text = await h.metrics();
    expect(metricValue(text, 'rpc_upstream_attempts_total', { outcome: 'success' })).toBe(3);
    expect(metricValue(text, 'cascade_write_outcomes_total', { outcome: 'sent' })).toBe(1);
  });
});
