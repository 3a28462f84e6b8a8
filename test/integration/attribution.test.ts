/**
 * Whose fault an upstream's error is, seen from a client and from the fleet: what the client
 * gets (status, bytes), how many attempts were made, what was booked and who was penalized.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_RULES, type ErrorRule } from '../../src/core/protocol/upstream-errors.js';
import type { MockBehaviour } from '../../src/mock/index.js';
import { rpc, startHarness, type Harness, type TestNode } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** A JSON-RPC error answer as a node writes it (the id echoed as 1). */
function errorBody(error: { code: number; message: string; data?: unknown }): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, error });
}

/** A node whose every answer is `body` with HTTP `status`. */
function answering(body: string, status = 200): Partial<MockBehaviour> {
  return { fault: { kind: 'http', status, body, contentType: 'application/json' } };
}

async function start(nodes: TestNode[]): Promise<Harness> {
  harness = await startHarness(nodes);
  return harness;
}

function attemptsOf(text: string, node: string): number {
  let total = 0;
  for (const match of text.matchAll(
    new RegExp(`^rpc_upstream_attempts_total\\{node="${node}",outcome="[a-z_]+"\\} (\\d+)$`, 'gm'),
  )) {
    total += Number(match[1]);
  }
  return total;
}

/** Node name → 'up' | 'down' | 'unknown'. */
async function states(h: Harness): Promise<Record<string, string>> {
  return Object.fromEntries((await h.health()).nodes.map((n) => [n.name, n.status]));
}

const REVERT_DATA =
  '0x08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000002645524332303a207472616e7366657220616d6f756e7420657863656564732062616c616e636500000000000000000000000000000000000000000000000000000000';

describe('deterministic errors are answers: relayed once, no retry, no penalty', () => {
  // The measurements that opened the issue: both nodes give the same error.
  it.each([
    [
      'a failed Solana preflight',
      'sendTransaction',
      {
        code: -32002,
        message:
          'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
        data: {
          accounts: null,
          err: { InstructionError: [0, { Custom: 1 }] },
          logs: ['Program 11111111111111111111111111111111 invoke [1]', 'Program log: Error'],
          unitsConsumed: 1500,
        },
      },
    ],
    [
      'an EVM revert with data',
      'eth_call',
      {
        code: 3,
        message: 'execution reverted: ERC20: transfer amount exceeds balance',
        data: REVERT_DATA,
      },
    ],
    [
      'a reverting gas estimate',
      'eth_estimateGas',
      { code: -32000, message: 'execution reverted' },
    ],
    [
      'insufficient funds',
      'eth_sendRawTransaction',
      { code: -32000, message: 'insufficient funds for gas * price + value' },
    ],
    ['a stale nonce', 'eth_sendRawTransaction', { code: -32000, message: 'nonce too low' }],
    [
      'a hardhat revert',
      'eth_call',
      {
        code: -32603,
        message: "VM Exception while processing transaction: reverted with reason string 'nope'",
      },
    ],
  ])('%s (%s)', async (_name, method, error) => {
    const body = errorBody(error);
    const h = await start([
      { name: 'a', tier: 0, mock: answering(body) },
      { name: 'b', tier: 1, mock: answering(body) },
    ]);
    const answer = await h.post(rpc(method, 1));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(body);
    const text = await h.metrics();
    expect([attemptsOf(text, 'a'), attemptsOf(text, 'b')]).toEqual([1, 0]);
    expect(text).toMatch(/rpc_upstream_attempts_total\{node="a",outcome="forwarded_rpc_error"\} 1/);
    expect([h.ledger.counter('a').used, h.ledger.counter('b').used]).toEqual([1, 0]);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'unknown' });
    expect(text).toMatch(/rpc_requests_total\{outcome="forwarded"\} 1/);
  });

  it("keeps the node's HTTP status with its error", async () => {
    const body = errorBody({ code: 3, message: 'execution reverted', data: '0x' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(body, 500) },
      { name: 'b', tier: 1 },
    ]);
    const answer = await h.post(rpc('eth_call', 1));
    expect([answer.status, answer.body]).toEqual([500, body]);
    expect(h.mocks.b!.stats().requests).toBe(0);
  });
});

/** What each kind of rule does to the node that answered with it, and to the request. */
const EXPECTED: Record<ErrorRule['fault'], { answeredBy: 'a' | 'b'; aState: string }> = {
  request: { answeredBy: 'a', aState: 'unknown' },
  node_state: { answeredBy: 'b', aState: 'unknown' },
  node_unhealthy: { answeredBy: 'b', aState: 'down' },
  rate_limited: { answeredBy: 'b', aState: 'down' },
};

describe('every row of the error table, through the proxy', () => {
  it.each(ERROR_RULES.map((rule) => [`${rule.fault}: ${rule.example.message}`, rule] as const))(
    '%s',
    async (_name, rule) => {
      const body = errorBody(rule.example);
      const h = await start([
        { name: 'a', tier: 0, mock: answering(body) },
        { name: 'b', tier: 1 },
      ]);
      const answer = await h.post(rpc('getSlot', 1));
      const expected = EXPECTED[rule.fault];
      expect(answer.status).toBe(200);
      if (expected.answeredBy === 'a') {
        expect(answer.body).toBe(body);
        expect(h.mocks.b!.stats().requests).toBe(0);
      } else {
        expect((answer.json as { result?: unknown }).result).toBeDefined();
        expect(h.mocks.b!.stats().requests).toBe(1);
      }
      expect((await states(h)).a).toBe(expected.aState);
    },
  );
});

describe('node-state errors move on; when every node has one, the client gets an upstream error', () => {
  it('relays the last upstream error, not "All nodes failed"', async () => {
    const first = errorBody({ code: -32000, message: 'header not found' });
    const last = errorBody({ code: -32000, message: 'missing trie node 1a2b (path )' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(first) },
      { name: 'b', tier: 1, mock: answering(last) },
    ]);
    const answer = await h.post(rpc('eth_getBalance', 1));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(last);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'unknown' });
    expect([h.ledger.counter('a').used, h.ledger.counter('b').used]).toEqual([1, 1]);
    expect(await h.metrics()).toMatch(/rpc_requests_total\{outcome="forwarded"\} 1/);
  });

  it('relays an upstream error even when a later node failed at the transport', async () => {
    const error = errorBody({ code: -32004, message: 'Block not available for slot 5' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(error) },
      { name: 'b', tier: 1, mock: { fault: { kind: 'close' } } },
    ]);
    const answer = await h.post(rpc('getBlock', 1));
    expect([answer.status, answer.body]).toEqual([200, error]);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'down' });
  });

  it('keeps the synthetic 502 for transport failures only', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: { fault: { kind: 'close' } } },
      { name: 'b', tier: 1, mock: { fault: { kind: 'invalid_json' } } },
    ]);
    const answer = await h.post(rpc('getSlot', 7));
    expect(answer.status).toBe(502);
    expect(answer.json).toMatchObject({ id: 7, error: { code: -32000 } });
  });
});

describe('an unknown error is judged by agreement', () => {
  const unknown = errorBody({ code: -32603, message: 'internal error: something odd' });

  it('two nodes agreeing make it the request’s: relayed after two attempts, nobody penalized', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(unknown) },
      { name: 'c', tier: 2 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect([answer.status, answer.body]).toEqual([200, unknown]);
    expect(h.mocks.c!.stats().requests).toBe(0);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'unknown', c: 'unknown' });
  });

  it('a node that answers where the first erred proves the first at fault', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect((answer.json as { result?: unknown }).result).toBeDefined();
    expect(await states(h)).toEqual({ a: 'down', b: 'up' });
  });

  it('agreement with an earlier node stands even after a third said something else', async () => {
    const other = errorBody({ code: -32603, message: 'internal error: something else' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(other) },
      { name: 'c', tier: 2, mock: answering(unknown) },
      { name: 'd', tier: 3 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect([answer.status, answer.body]).toEqual([200, unknown]);
    expect(h.mocks.d!.stats().requests).toBe(0);
    // `b` was the odd one out.
    expect(await states(h)).toEqual({ a: 'unknown', b: 'down', c: 'unknown', d: 'unknown' });
  });

  it('a fleet never goes down for one request: many such requests leave every node active', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(unknown) },
      { name: 'c', tier: 2, mock: answering(unknown) },
    ]);
    for (let i = 0; i < 5; i++) expect((await h.post(rpc('getSlot', i))).body).toBe(unknown);
    expect((await h.health()).status).toBe('ok');
    // Two attempts per request at most.
    expect(h.mocks.c!.stats().requests).toBe(0);
  });
});

describe('batches follow the same rules per element', () => {
  /** An upstream answering eth_call with a revert and eth_getBalance with a node-state error. */
  function picky(): Promise<string> {
    return startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const calls = JSON.parse(Buffer.concat(chunks).toString()) as Array<{
          id: number;
          method: string;
        }>;
        const answers = (Array.isArray(calls) ? calls : [calls]).map(({ id, method }) =>
          method === 'eth_call'
            ? { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x' } }
            : method === 'eth_getBalance'
              ? { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } }
              : { jsonrpc: '2.0', id, result: '0x1' },
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      });
    });
  }

  it('relays an element’s deterministic error, retries its node-state error elsewhere', async () => {
    const h = await start([
      { name: 'a', tier: 0 },
      { name: 'b', tier: 1 },
    ]);
    pointAt(h, 'a', await picky());
    const answer = await h.post([
      rpc('eth_call', 1),
      rpc('eth_getBalance', 2, ['0x0000000000000000000000000000000000000001', 'latest']),
      rpc('eth_blockNumber', 3),
    ]);
    const answers = answer.json as Array<{
      id: number;
      error?: { code: number };
      result?: unknown;
    }>;
    expect(answers[0]).toMatchObject({ id: 1, error: { code: 3 } });
    expect(answers[1]!.result).toBeDefined();
    expect(answers[2]!.result).toBeDefined();
    expect(h.mocks.b!.stats().byMethod).toEqual({ eth_getBalance: 1 });
    // Not penalized (an answer with an error in it is not a measurement either).
    expect(await states(h)).toEqual({ a: 'unknown', b: 'up' });
  });

  it('a node refusing batches is not penalized; its elements go one per attempt', async () => {
    const h = await start([{ name: 'a', tier: 0 }]);
    const seen: string[] = [];
    const url = await startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        seen.push(text.startsWith('[') ? 'batch' : 'single');
        const call = JSON.parse(text) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          text.startsWith('[')
            ? '{"jsonrpc":"2.0","error":{"code":-32600,"message":"batch requests are not supported"},"id":null}'
            : JSON.stringify({ jsonrpc: '2.0', id: call.id, result: 42 }),
        );
      });
    });
    pointAt(h, 'a', url);
    const answer = await h.post([rpc('getSlot', 1), rpc('getSlot', 2)]);
    expect(answer.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: 42 },
      { jsonrpc: '2.0', id: 2, result: 42 },
    ]);
    expect(seen[0]).toBe('batch');
    expect(seen.slice(1)).toEqual(['single', 'single']);
    expect((await states(h)).a).toBe('up');
  });
});
