/** Subscription placement and leave decisions ask the one eligibility rule (cordon included). */
import { afterEach, describe, expect, it } from 'vitest';
import { Bound, ChainState, Family, Level, headSlot } from '../chain/chain-state.js';
import { ManualClock } from '../clock.js';
import { SkipReason } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { buildTable } from '../routing/routing-table.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import { placeSubscription, reasonToLeave } from './ws-admission.js';

const clock = new ManualClock();
const nodes = fakeNodes(clock);

afterEach(() => nodes.close());

const noSocketPenalty = (): boolean => false;

function place(all: UpstreamNode[], excluded: UpstreamNode[] = [], mayFailOpen = true) {
  return placeSubscription(buildTable(all), clock.now(), excluded, noSocketPenalty, mayFailOpen);
}

describe('placeSubscription', () => {
  it('passes over a node the chain tracker knows is behind for a fresh one of its tier only', () => {
    const chain = new ChainState();
    const slot = headSlot(Family.evm, Level.latest);
    const behind = nodes.make('behind');
    const fresh = nodes.make('fresh');
    const other = nodes.make('other', { tier: 1 });
    const now = clock.now();
    chain.observe(behind.node.heads, slot, 100, Bound.exact, now);
    chain.observe(fresh.node.heads, slot, 300, Bound.exact, now);
    chain.observe(other.node.heads, slot, 300, Bound.exact, now);
    for (const n of [behind, fresh, other]) chain.track(n.node.heads);
    const table = buildTable([behind.node, fresh.node, other.node], chain);
    expect(placeSubscription(table, now, [], noSocketPenalty)).toEqual({
      kind: 'node',
      node: fresh.node,
    });
    // With the fresh node gone, the lagging node of tier 0 still beats tier 1: no spill.
    expect(placeSubscription(table, now, [fresh.node], noSocketPenalty)).toEqual({
      kind: 'node',
      node: behind.node,
    });
  });

  it('passes over a cordoned node without a skip, and uses it again once uncordoned', () => {
    const a = nodes.make('a');
    const b = nodes.make('b', { tier: 1 });
    a.node.cordoned = true;
    expect(place([a.node, b.node])).toEqual({ kind: 'node', node: b.node });
    expect(a.skips).toEqual([]);
    a.node.cordoned = false;
    expect(place([a.node, b.node])).toEqual({ kind: 'node', node: a.node });
  });

  it('finds no node when every node is cordoned, even failing open', () => {
    const a = nodes.make('a');
    const b = nodes.make('b');
    a.node.cordoned = b.node.cordoned = true;
    b.node.penalty.penalize(clock.now(), 0);
    expect(place([a.node, b.node])).toEqual({ kind: 'none' });
    expect([...a.skips, ...b.skips]).toEqual([]);
  });

  it('counts the skips as before: no [websocket] table before a penalty, then quota and rate', () => {
    const noWs = nodes.make('no-ws', { ws: null });
    noWs.node.penalty.penalize(clock.now(), 0);
    const over = nodes.make('over', { spilloverThreshold: 0 });
    over.use(1);
    const limited = nodes.make('limited', { rpsLimit: 1 });
    expect(limited.node.takeToken(clock.now())).toBe(0);
    expect(place([noWs.node, over.node, limited.node])).toEqual({ kind: 'wait', ms: 1000 });
    expect(noWs.skips).toEqual([SkipReason.methodUnsupported]);
    expect(over.skips).toEqual([SkipReason.quotaExhausted]);
    expect(limited.skips).toEqual([SkipReason.rateLimit]);
  });

  it('fails open past penalties (node or socket), never past a cordon', () => {
    const a = nodes.make('a');
    const b = nodes.make('b', { tier: 1 });
    a.node.cordoned = true;
    b.node.penalty.penalize(clock.now(), 0);
    expect(place([a.node, b.node])).toEqual({ kind: 'node', node: b.node });
    expect(b.skips).toEqual([SkipReason.penalized]);
    expect(place([a.node, b.node], [], false)).toEqual({ kind: 'none' });
    const socketPenalized = placeSubscription(
      buildTable([b.node]),
      clock.now() + 60_000,
      [],
      () => true,
      false,
    );
    expect(socketPenalized).toEqual({ kind: 'none' });
  });

  it('takes a rate token, never a concurrency permit', () => {
    const { node } = nodes.make('busy', { maxConcurrent: 1, rpsLimit: 1 });
    expect(node.permits.tryAcquire()).toBe(true);
    expect(place([node])).toEqual({ kind: 'node', node });
    expect(node.permits.inFlight).toBe(1);
    expect(place([node])).toEqual({ kind: 'wait', ms: 1000 });
  });
});

describe('reasonToLeave', () => {
  it('says cordoned for a cordoned node, nothing once uncordoned', () => {
    const { node } = nodes.make('c');
    expect(reasonToLeave(node, clock.now())).toBeUndefined();
    node.cordoned = true;
    expect(reasonToLeave(node, clock.now())).toBe('cordoned');
    node.cordoned = false;
    expect(reasonToLeave(node, clock.now())).toBeUndefined();
  });

  it('names the first reason of the rule: removed, cordoned, penalized, over quota', () => {
    const { node, use } = nodes.make('all', { spilloverThreshold: 0 });
    node.retired = true;
    node.cordoned = true;
    node.penalty.penalize(clock.now(), 0);
    use(1);
    const reasons = [];
    reasons.push(reasonToLeave(node, clock.now()));
    node.retired = false;
    reasons.push(reasonToLeave(node, clock.now()));
    node.cordoned = false;
    reasons.push(reasonToLeave(node, clock.now()));
    clock.advance(node.penalty.until - clock.now());
    reasons.push(reasonToLeave(node, clock.now()));
    expect(reasons).toEqual(['removed', 'cordoned', 'penalized', 'over_quota']);
    expect(reasonToLeave(nodes.make('no-ws', { ws: null }).node, clock.now())).toBe('removed');
  });
});
