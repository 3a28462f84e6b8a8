import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { UNPRICED } from '../config/types.js';
import { SkipReason } from '../metrics.js';
import { fakeNodes } from '../../../test/support/fake-node.js';
import {
  Bar,
  Door,
  eligibility,
  nodeBar,
  passedOver,
  SATURATED,
  skipReasonOf,
  takeLimits,
  workBar,
} from './eligibility.js';

const clock = new ManualClock();
const nodes = fakeNodes(clock);

afterEach(() => nodes.close());

describe('eligibility: each reason a node may not take new work', () => {
  it('admits a healthy node through both doors', () => {
    const { node } = nodes.make('ok');
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.none);
    expect(eligibility(node, Door.subscription, clock.now(), false, 0)).toBe(Bar.none);
  });

  it('bars a node a reload removed', () => {
    const { node } = nodes.make('gone');
    node.retired = true;
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.retired);
  });

  it('bars a cordoned node through both doors, and lets it back when uncordoned', () => {
    const { node } = nodes.make('c');
    node.cordoned = true;
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.cordoned);
    expect(eligibility(node, Door.subscription, clock.now(), false, 0)).toBe(Bar.cordoned);
    node.cordoned = false;
    expect(eligibility(node, Door.subscription, clock.now(), false, 0)).toBe(Bar.none);
  });

  it('bars subscriptions, not requests, on a node whose price list has no [websocket] table', () => {
    const { node } = nodes.make('http-only', { ws: null });
    expect(eligibility(node, Door.subscription, clock.now(), false, 0)).toBe(Bar.closedDoor);
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.none);
  });

  it('bars a penalized node until the penalty ends, judged at the time given', () => {
    const { node } = nodes.make('p');
    const start = clock.now();
    node.penalty.penalize(start, 0);
    expect(eligibility(node, Door.request, start, false, 1)).toBe(Bar.penalized);
    clock.advance(node.penalty.until - start);
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.none);
    // A round that started during the penalty still judges the node by its start.
    expect(nodeBar(node, Door.request, start, false)).toBe(Bar.penalized);
  });

  it('bars a node the door itself penalized (a WebSocket that dropped)', () => {
    const { node } = nodes.make('dropped');
    expect(nodeBar(node, Door.subscription, clock.now(), false, true)).toBe(Bar.penalized);
  });

  it('bars work the node has no price for', () => {
    const { node } = nodes.make('u');
    expect(eligibility(node, Door.request, clock.now(), false, UNPRICED)).toBe(Bar.unpriced);
  });

  it('bars a node whose usage is past its spillover threshold (at the threshold it serves)', () => {
    const { node, use } = nodes.make('q', { spilloverThreshold: 100 });
    use(100);
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.none);
    use(101);
    expect(eligibility(node, Door.request, clock.now(), false, 1)).toBe(Bar.overQuota);
    expect(eligibility(node, Door.subscription, clock.now(), false, 0)).toBe(Bar.overQuota);
  });
});

describe('eligibility: failing open', () => {
  it('lets a penalized node take work when the work fails open', () => {
    const { node } = nodes.make('p');
    node.penalty.penalize(clock.now(), 0);
    expect(eligibility(node, Door.request, clock.now(), true, 1)).toBe(Bar.none);
    expect(nodeBar(node, Door.subscription, clock.now(), true, true)).toBe(Bar.none);
  });

  it('never fails open past a cordon, a removal, a missing price or the quota', () => {
    const cordoned = nodes.make('c').node;
    cordoned.cordoned = true;
    const retired = nodes.make('r').node;
    retired.retired = true;
    const over = nodes.make('q', { spilloverThreshold: 0 });
    over.use(1);
    const now = clock.now();
    expect(eligibility(cordoned, Door.request, now, true, 1)).toBe(Bar.cordoned);
    expect(eligibility(retired, Door.request, now, true, 1)).toBe(Bar.retired);
    expect(eligibility(nodes.make('u').node, Door.request, now, true, UNPRICED)).toBe(Bar.unpriced);
    expect(eligibility(over.node, Door.request, now, true, 1)).toBe(Bar.overQuota);
  });
});

describe('eligibility: the order of the checks', () => {
  /** A node failing every check, to peel them off one by one. */
  function failingEverything() {
    const made = nodes.make('all', { ws: null, spilloverThreshold: 0 });
    made.node.retired = true;
    made.node.cordoned = true;
    made.node.penalty.penalize(clock.now(), 0);
    made.use(1);
    return made.node;
  }

  it('answers the first that applies: retired, cordoned, door, penalty, price, quota', () => {
    const node = failingEverything();
    const now = clock.now();
    const seen: Bar[] = [];
    seen.push(eligibility(node, Door.subscription, now, false, UNPRICED));
    node.retired = false;
    seen.push(eligibility(node, Door.subscription, now, false, UNPRICED));
    node.cordoned = false;
    seen.push(eligibility(node, Door.subscription, now, false, UNPRICED));
    // The request door has no door check: the penalty is next.
    seen.push(eligibility(node, Door.request, now, false, UNPRICED));
    seen.push(eligibility(node, Door.request, now, true, UNPRICED));
    seen.push(eligibility(node, Door.request, now, true, 1));
    expect(seen).toEqual([
      Bar.retired,
      Bar.cordoned,
      Bar.closedDoor,
      Bar.penalized,
      Bar.unpriced,
      Bar.overQuota,
    ]);
  });

  it('splits into the node stage and the work stage (a batch prices each element)', () => {
    const { node, use } = nodes.make('s', { spilloverThreshold: 0 });
    use(1);
    expect(nodeBar(node, Door.request, clock.now(), false)).toBe(Bar.none);
    expect(workBar(node, UNPRICED)).toBe(Bar.unpriced);
    expect(workBar(node, 1)).toBe(Bar.overQuota);
  });

  it('passes over a removed or cordoned node silently and counts a skip for the rest', () => {
    expect([Bar.retired, Bar.cordoned, Bar.none].map(passedOver)).toEqual([true, true, false]);
    expect(
      [Bar.retired, Bar.cordoned, Bar.closedDoor, Bar.penalized, Bar.unpriced, Bar.overQuota].map(
        skipReasonOf,
      ),
    ).toEqual([
      -1,
      -1,
      SkipReason.methodUnsupported,
      SkipReason.penalized,
      SkipReason.methodUnsupported,
      SkipReason.quotaExhausted,
    ]);
  });
});

describe('takeLimits: the door decides the limits', () => {
  it('takes a permit and a token for a request; SATURATED when no permit is free', () => {
    const { node } = nodes.make('r', { maxConcurrent: 1 });
    expect(takeLimits(node, clock.now(), Door.request, false)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
    expect(takeLimits(node, clock.now(), Door.request, false)).toBe(SATURATED);
    expect(node.crowded).toBe(1);
    // An attempt that holds its permit takes only a token for its next element.
    expect(takeLimits(node, clock.now(), Door.request, true)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
  });

  it('takes a token and no permit for a subscription', () => {
    const { node } = nodes.make('s', { maxConcurrent: 1 });
    expect(node.permits.tryAcquire()).toBe(true);
    expect(takeLimits(node, clock.now(), Door.subscription, false)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
  });

  it('answers the wait for the next token and gives back the permit it took', () => {
    const { node } = nodes.make('t', { rpsLimit: 1, maxConcurrent: 1 });
    expect(takeLimits(node, clock.now(), Door.request, false)).toBe(0);
    node.permits.release();
    expect(takeLimits(node, clock.now(), Door.request, false)).toBe(1000);
    expect(node.permits.inFlight).toBe(0);
    expect(takeLimits(node, clock.now(), Door.subscription, false)).toBe(1000);
    clock.advance(1000);
    expect(takeLimits(node, clock.now(), Door.subscription, false)).toBe(0);
    expect(node.wanted).toBe(4);
  });
});
