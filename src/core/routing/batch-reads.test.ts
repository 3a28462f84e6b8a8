/**
 * Batch elements routed exactly like the same request alone (docs/routing.md §4), on fake
 * nodes and a manual clock: each element walks its own policy's order, a hedged element is
 * hedged, and a node still gets a round's elements in one sub-batch where their orders meet.
 */
import { describe, expect, it } from 'vitest';
import { HedgeEvent } from '../metrics.js';
import { FakeFleet, answers, errors, rpc } from '../../../test/support/fake-fleet.js';
import { routingWith } from '../../../test/support/routing-config.js';

/** A batch of single requests' JSON. */
function batch(...requests: string[]): string {
  return `[${requests.join(',')}]`;
}

/** The methods a node was sent, call by call. */
function methodsSent(fleet: FakeFleet, name: string): string[][] {
  return fleet.calls(name).map((body) => {
    const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>;
    return Array.isArray(parsed) ? parsed.map((r) => r.method) : [parsed.method];
  });
}

describe('batch elements routed like singles', () => {
  it('a latency element walks fastest first while a cost element walks the ranked table', async () => {
    const fleet = new FakeFleet([
      { name: 'premium', tier: 0, script: answers('0xp') },
      { name: 'quick', tier: 1, script: answers('0xq') },
    ]);
    fleet.measure('premium', 50);
    fleet.measure('quick', 5);
    // eth_gasPrice is a shipped `latency` method; eth_blockNumber has the default, `cost`.
    const routed = fleet.batch(batch(rpc('eth_blockNumber', 1), rpc('eth_gasPrice', 2)));
    await fleet.advance(20);
    const result = await routed;
    expect(methodsSent(fleet, 'premium')).toEqual([['eth_blockNumber']]);
    expect(methodsSent(fleet, 'quick')).toEqual([['eth_gasPrice']]);
    expect(result.nodes).toEqual(['premium', 'quick']);
    expect(JSON.parse(result.body)).toEqual([
      { jsonrpc: '2.0', id: 1, result: '0xp' },
      { jsonrpc: '2.0', id: 2, result: '0xq' },
    ]);
  });

  it('elements of both orders whose next node is the same travel to it in one sub-batch', async () => {
    const fleet = new FakeFleet([{ name: 'only', script: answers('0x1') }]);
    const routed = fleet.batch(batch(rpc('eth_blockNumber', 1), rpc('eth_gasPrice', 2)));
    await fleet.advance(20);
    expect((await routed).attempts).toBe(1);
    expect(methodsSent(fleet, 'only')).toEqual([['eth_blockNumber', 'eth_gasPrice']]);
  });

  it('a hedged element is hedged, within the same hedge budget and metrics', async () => {
    const fleet = new FakeFleet(
      [
        { name: 'slow', script: answers('0xslow', 200) },
        { name: 'fast', script: answers('0xfast', 10) },
      ],
      { routing: routingWith({ eth_getBalance: { hedgeAfterMs: 50 } }, { hedgeMaxShare: 1 }) },
    );
    const routed = fleet.batch(batch(rpc('eth_getBalance', 1), rpc('eth_blockNumber', 2)));
    await fleet.advance(250);
    const result = await routed;
    expect(fleet.log.hedges).toEqual([HedgeEvent.sent, HedgeEvent.cancelled, HedgeEvent.won]);
    expect(JSON.parse(result.body)).toEqual([
      { jsonrpc: '2.0', id: 1, result: '0xfast' },
      { jsonrpc: '2.0', id: 2, result: '0xslow' },
    ]);
  });

  it('two nodes agreeing on an element’s unknown error answer it with that error', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: errors(-39001, 'strange') },
      { name: 'b', script: errors(-39001, 'strange') },
    ]);
    const routed = fleet.batch(batch(rpc('eth_blockNumber', 1)));
    await fleet.advance(30);
    const result = await routed;
    expect(result.attempts).toBe(2);
    expect(result.body).toContain('strange');
    expect(fleet.log.penalized).toEqual([]);
  });

  it('an element whose budget ran out says so; answered ones keep their answers', async () => {
    const fleet = new FakeFleet(
      [
        {
          name: 'a',
          script: (body) => (body.includes('eth_chainId') ? 'hang' : answers('0x1')(body, 0)),
        },
      ],
      { budgetMs: 300 },
    );
    fleet.node('a').refusesBatches = true; // one element per attempt
    const routed = fleet.batch(batch(rpc('eth_blockNumber', 1), rpc('eth_chainId', 2)));
    await fleet.advance(300);
    const result = await routed;
    expect(result.timedOut).toBe(true);
    const [first, second] = JSON.parse(result.body) as Array<Record<string, unknown>>;
    expect(first).toEqual({ jsonrpc: '2.0', id: 1, result: '0x1' });
    expect(second!.error).toBeDefined();
  });

  it('a batch waits for a permit like a single request, then sends what the node takes at once', async () => {
    const fleet = new FakeFleet([{ name: 'a', maxConcurrent: 1, script: answers('0x1', 100) }]);
    const first = fleet.batch(batch(rpc('eth_blockNumber', 1), rpc('eth_chainId', 2)));
    const second = fleet.batch(batch(rpc('eth_blockNumber', 3), rpc('eth_chainId', 4)));
    await fleet.advance(100);
    expect((await first).attempts).toBe(1);
    await fleet.advance(100);
    const result = await second;
    expect(result.attempts).toBe(1);
    expect(methodsSent(fleet, 'a')).toEqual([
      ['eth_blockNumber', 'eth_chainId'],
      ['eth_blockNumber', 'eth_chainId'],
    ]);
    expect(fleet.log.waits).toEqual([1, -1]);
  });

  it('a batch fails open when every node is penalized', async () => {
    const fleet = new FakeFleet([{ name: 'a', script: answers('0x1') }]);
    fleet.node('a').penalty.penalize(fleet.clock.now(), 0);
    const routed = fleet.batch(batch(rpc('eth_blockNumber', 1)));
    await fleet.advance(10);
    expect((await routed).nodes).toEqual(['a']);
  });
});
