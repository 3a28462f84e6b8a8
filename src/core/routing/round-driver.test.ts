/**
 * The round driver through the single-request door (route.ts), on fake nodes and a manual
 * clock: waits, fail-open, exhaustion, the budget, a reload mid-request, disputes and the held
 * upstream error (docs/routing.md §2–3).
 */
import { describe, expect, it } from 'vitest';
import { FakeFleet, answers, bodyOf, errors, rpc } from '../../../test/support/fake-fleet.js';

const READ = rpc('eth_blockNumber', 1);

describe('the round driver (single requests)', () => {
  it('the common request: one attempt on the first ranked node, answered', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: answers('0x1') },
      { name: 'b', script: answers('0x2') },
    ]);
    const routed = fleet.route(READ);
    await fleet.advance(10);
    const result = await routed;
    expect(result).toMatchObject({ kind: 'answer', status: 200, node: 'a', attempts: 1 });
    expect(bodyOf(result)).toContain('"0x1"');
    expect(fleet.calls('b')).toHaveLength(0);
  });

  it('moves on to the next node after a failure, and gives up when every node failed', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => ({ after: 5, fail: 'connection refused' }) },
      { name: 'b', script: () => ({ after: 5, fail: 'connection reset' }) },
    ]);
    const routed = fleet.route(READ);
    await fleet.advance(20);
    expect(await routed).toMatchObject({ kind: 'exhausted', attempts: 2 });
    expect(fleet.log.penalized).toEqual(['a', 'b']);
  });

  it('sleeps until the earliest rate token, then sends (counted as waiting)', async () => {
    const fleet = new FakeFleet([{ name: 'a', rpsLimit: 1, script: answers('0x1', 5) }], {
      budgetMs: 3_000,
    });
    fleet.node('a').takeToken(fleet.clock.now()); // the only token is spent
    let done = false;
    const routed = fleet.route(READ).finally(() => (done = true));
    await fleet.advance(990);
    expect(done).toBe(false);
    expect(fleet.calls('a')).toHaveLength(0);
    await fleet.advance(20);
    expect(fleet.calls('a')).toHaveLength(1);
    await fleet.advance(5);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'a' });
    expect(fleet.log.waits).toEqual([1, -1]);
  });

  it('waits first come, first served for a permit on a saturated node', async () => {
    const fleet = new FakeFleet([{ name: 'a', maxConcurrent: 1, script: answers('0x1', 100) }]);
    const first = fleet.route(rpc('eth_blockNumber', 1));
    const second = fleet.route(rpc('eth_blockNumber', 2));
    await fleet.advance(50);
    expect(fleet.calls('a')).toHaveLength(1);
    await fleet.advance(50); // the first answer frees the permit: the second is sent
    expect(await first).toMatchObject({ kind: 'answer' });
    expect(fleet.calls('a')).toHaveLength(2);
    await fleet.advance(100);
    const result = await second;
    expect(bodyOf(result)).toContain('"id":2');
  });

  it('fails open once when every node was skipped for a penalty', async () => {
    const fleet = new FakeFleet([{ name: 'a', script: answers('0x1') }]);
    fleet.node('a').penalty.penalize(fleet.clock.now(), 0);
    const routed = fleet.route(READ);
    await fleet.advance(10);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'a' });
    expect(fleet.log.recovered).toEqual(['a']); // its success clears the penalty
  });

  it('passes a penalized node over while another can serve', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: answers('0x1') },
      { name: 'b', script: answers('0x2') },
    ]);
    fleet.node('a').penalty.penalize(fleet.clock.now(), 0);
    const routed = fleet.route(READ);
    await fleet.advance(10);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'b' });
    expect(fleet.calls('a')).toHaveLength(0);
  });

  it('ends with a timeout when the budget runs out, without judging the node', async () => {
    const fleet = new FakeFleet([{ name: 'a', script: () => 'hang' }], { budgetMs: 300 });
    const routed = fleet.route(READ);
    await fleet.advance(300);
    expect(await routed).toMatchObject({ kind: 'timeout', attempts: 1 });
    expect(fleet.log.penalized).toEqual([]);
  });

  it('walks again when a reload published new nodes mid-request', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: () => ({ after: 5, fail: 'connection refused' }) },
      { name: 'b', script: answers('0x2') },
    ]);
    const [a, b] = fleet.nodes;
    fleet.table = { all: [a!], ranked: [a!], byLatency: [a!] };
    const routed = fleet.route(READ);
    fleet.table = { all: [a!, b!], ranked: [a!, b!], byLatency: [a!, b!] }; // the reload
    await fleet.advance(20);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'b', attempts: 2 });
  });

  it('two nodes giving the same unknown error make it the request’s: relayed, nobody penalized', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: errors(-39001, 'strange') },
      { name: 'b', script: errors(-39001, 'strange') },
    ]);
    const routed = fleet.route(READ);
    await fleet.advance(20);
    const result = await routed;
    expect(result).toMatchObject({ kind: 'answer', node: 'b', attempts: 2 });
    expect(bodyOf(result)).toContain('strange');
    expect(fleet.log.penalized).toEqual([]);
  });

  it('a node answering after an unknown error makes that error its node’s fault', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: errors(-39001, 'strange') },
      { name: 'b', script: answers('0x2') },
    ]);
    const routed = fleet.route(READ);
    await fleet.advance(20);
    expect(await routed).toMatchObject({ kind: 'answer', node: 'b' });
    expect(fleet.log.penalized).toEqual(['a']);
  });

  it('an upstream’s error beats a synthetic one when routing gives up', async () => {
    const fleet = new FakeFleet([
      { name: 'a', script: errors(-32004, 'block not available') },
      { name: 'b', script: () => ({ after: 5, fail: 'connection refused' }) },
    ]);
    const routed = fleet.route(READ);
    await fleet.advance(20);
    const result = await routed;
    expect(result).toMatchObject({ kind: 'answer', node: 'a', attempts: 2 });
    expect(bodyOf(result)).toContain('block not available');
  });
});
