/**
 * The hedge and write strategies plugged into the round driver, on fake nodes and a manual
 * clock (docs/routing.md §6): the hedge budget and its metrics, and the write rules — no
 * resend once a write may have landed, a signed transaction's identity, "already known" as
 * success.
 */
import { describe, expect, it } from 'vitest';
import { HedgeEvent, WriteOutcome } from '../metrics.js';
import { evmTransactionHash } from '../protocol/transaction-id.js';
import { FakeFleet, answers, bodyOf, errors, rpc } from '../../../test/support/fake-fleet.js';
import { routingWith } from '../../../test/support/routing-config.js';

function hedgedFleet(share: number): FakeFleet {
  return new FakeFleet(
    [
      { name: 'slow', script: answers('0xslow', 200) },
      { name: 'fast', script: answers('0xfast', 10) },
    ],
    { routing: routingWith({ eth_getBalance: { hedgeAfterMs: 50 } }, { hedgeMaxShare: share }) },
  );
}

describe('hedged reads', () => {
  it('hedges a slow first attempt; the first answer wins and the other is cancelled', async () => {
    const fleet = hedgedFleet(1);
    const routed = fleet.route(rpc('eth_getBalance', 1));
    await fleet.advance(60);
    const result = await routed;
    expect(result).toMatchObject({ kind: 'answer', node: 'fast', attempts: 2 });
    expect(fleet.log.hedges).toEqual([HedgeEvent.sent, HedgeEvent.cancelled, HedgeEvent.won]);
    expect(fleet.node('slow').permits.inFlight).toBe(0);
    expect(fleet.log.penalized).toEqual([]); // the cancelled attempt is nobody's fault
  });

  it('never hedges past the budget: credit starts at zero and a hedge spends a whole one', async () => {
    const fleet = hedgedFleet(0.5);
    const first = fleet.route(rpc('eth_getBalance', 1)); // earns half a hedge: not enough
    await fleet.advance(200);
    expect(await first).toMatchObject({ node: 'slow', attempts: 1 });
    const second = fleet.route(rpc('eth_getBalance', 2)); // a whole one now
    await fleet.advance(60);
    expect(await second).toMatchObject({ node: 'fast', attempts: 2 });
    expect(fleet.log.hedges.filter((e) => e === HedgeEvent.sent)).toHaveLength(1);
  });
});

const RAW = '0x02f86a0180843b9aca00850ba43b7400825208940000000000000000000000000000000000000001';

describe('writes', () => {
  it('sends an unsigned write nowhere else once it may have landed', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => 'hang' },
      { name: 'b', script: answers('0xhash') },
    ]);
    const routed = fleet.route(rpc('eth_sendTransaction', 1, [{ to: '0x1' }]));
    await fleet.advance(500);
    expect(await routed).toMatchObject({ kind: 'exhausted', unsure: true, attempts: 1 });
    expect(fleet.calls('b')).toHaveLength(0);
    expect(fleet.log.writes).toEqual([WriteOutcome.failed]);
  });

  it('sends it on when the node surely did not take it (never written)', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => ({ after: 1, fail: 'connection refused', sent: false }) },
      { name: 'b', script: answers('0xhash') },
    ]);
    const routed = fleet.route(rpc('eth_sendTransaction', 1, [{ to: '0x1' }]));
    await fleet.advance(20);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'b' });
    expect(fleet.log.writes).toEqual([WriteOutcome.sent]);
  });

  it('resends a signed transaction (its identity is known) after a timeout', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => 'hang' },
      { name: 'b', script: answers(evmTransactionHash(RAW)) },
    ]);
    const routed = fleet.route(rpc('eth_sendRawTransaction', 1, [RAW]));
    await fleet.advance(520);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'b', attempts: 2 });
  });

  it('answers "already known" after an attempt that may have landed with the hash, and forgives the timeout', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => 'hang' },
      { name: 'b', script: errors(-32000, 'already known') },
    ]);
    const routed = fleet.route(rpc('eth_sendRawTransaction', 7, [RAW]));
    await fleet.advance(520);
    const result = await routed;
    expect(result).toMatchObject({ kind: 'answer', status: 200, node: 'b' });
    expect(JSON.parse(bodyOf(result))).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: evmTransactionHash(RAW),
    });
    expect(fleet.log.penalized).toEqual(['a']);
    expect(fleet.log.recovered).toEqual(['a']);
    expect(fleet.node('a').penalty.isActive(fleet.clock.now())).toBe(false);
    expect(fleet.log.writes).toEqual([WriteOutcome.alreadyKnownAsSuccess]);
  });

  it('relays "already known" as sent when it is the request’s only attempt', async () => {
    const fleet = new FakeFleet([{ name: 'a', script: errors(-32000, 'already known') }]);
    const routed = fleet.route(rpc('eth_sendRawTransaction', 1, [RAW]));
    await fleet.advance(20);
    expect(bodyOf(await routed)).toContain('already known');
  });
});
