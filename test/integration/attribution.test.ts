/**
 * Whose fault an upstream's error is, seen from a client: deterministic errors are relayed as
 * answers, and every row of the error table does what its kind says (status, bytes, attempts,
 * credits booked, penalties).
 */
import { describe, expect, it } from 'vitest';
import { ERROR_RULES, type ErrorRule } from '../../src/core/protocol/upstream-errors.js';
import { answering, errorBody, states } from '../support/error-answers.js';
import { rpc } from '../support/proxy-harness.js';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

function attemptsOf(text: string, node: string): number {
  let total = 0;
  for (const match of text.matchAll(
    new RegExp(`^rpc_upstream_attempts_total\\{node="${node}",outcome="[a-z_]+"\\} (\\d+)$`, 'gm'),
  )) {
    total += Number(match[1]);
  }
  return total;
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
