import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { UNPRICED } from '../config/types.js';
import { SkipReason } from '../metrics.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import {
  BAR_CLOSED_DOOR,
  BAR_CORDONED,
  BAR_NONE,
  BAR_OVER_QUOTA,
  BAR_PENALIZED,
  BAR_RETIRED,
  BAR_UNPRICED,
  DOOR_REQUEST,
  DOOR_SUBSCRIPTION,
  HELD_ALL,
  HELD_NONE,
  eligibility,
  nodeBar,
  passedOver,
  SATURATED,
  skipReasonOf,
  takeLimits,
  workBar,
  type Bar,
} from './eligibility.js';

const clock = new ManualClock();
const nodes = fakeNodes(clock);

afterEach(() => nodes.close());

describe('eligibility: each reason a node may not take new work', () => {
  it('admits a healthy node through both doors', () => {
    const { node } = nodes.make('ok');
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_NONE);
    expect(eligibility(node, DOOR_SUBSCRIPTION, clock.now(), false, 0)).toBe(BAR_NONE);
  });

  it('bars a node a reload removed', () => {
    const { node } = nodes.make('gone');
    node.retired = true;
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_RETIRED);
  });

  it('bars a cordoned node through both doors, and lets it back when uncordoned', () => {
    const { node } = nodes.make('c');
    node.cordoned = true;
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_CORDONED);
    expect(eligibility(node, DOOR_SUBSCRIPTION, clock.now(), false, 0)).toBe(BAR_CORDONED);
    node.cordoned = false;
    expect(eligibility(node, DOOR_SUBSCRIPTION, clock.now(), false, 0)).toBe(BAR_NONE);
  });

  it('bars subscriptions, not requests, on a node whose price list has no [websocket] table', () => {
    const { node } = nodes.make('http-only', { ws: null });
    expect(eligibility(node, DOOR_SUBSCRIPTION, clock.now(), false, 0)).toBe(BAR_CLOSED_DOOR);
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_NONE);
  });

  it('bars a penalized node until the penalty ends, judged at the time given', () => {
    const { node } = nodes.make('p');
    const start = clock.now();
    node.penalty.penalize(start, 0);
    expect(eligibility(node, DOOR_REQUEST, start, false, 1)).toBe(BAR_PENALIZED);
    clock.advance(node.penalty.until - start);
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_NONE);
    // A round that started during the penalty still judges the node by its start.
    expect(nodeBar(node, DOOR_REQUEST, start, false)).toBe(BAR_PENALIZED);
  });

  it('bars a node the door itself penalized (a WebSocket that dropped)', () => {
    const { node } = nodes.make('dropped');
    expect(nodeBar(node, DOOR_SUBSCRIPTION, clock.now(), false, true)).toBe(BAR_PENALIZED);
  });

  it('bars work the node has no price for', () => {
    const { node } = nodes.make('u');
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, UNPRICED)).toBe(BAR_UNPRICED);
  });

  it('bars a node whose usage is past its spillover threshold (at the threshold it serves)', () => {
    const { node, use } = nodes.make('q', { spilloverThreshold: 100 });
    use(100);
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_NONE);
    use(101);
    expect(eligibility(node, DOOR_REQUEST, clock.now(), false, 1)).toBe(BAR_OVER_QUOTA);
    expect(eligibility(node, DOOR_SUBSCRIPTION, clock.now(), false, 0)).toBe(BAR_OVER_QUOTA);
  });
});

describe('eligibility: failing open', () => {
  it('lets a penalized node take work when the work fails open', () => {
    const { node } = nodes.make('p');
    node.penalty.penalize(clock.now(), 0);
    expect(eligibility(node, DOOR_REQUEST, clock.now(), true, 1)).toBe(BAR_NONE);
    expect(nodeBar(node, DOOR_SUBSCRIPTION, clock.now(), true, true)).toBe(BAR_NONE);
  });

  it('never fails open past a cordon, a removal, a missing price or the quota', () => {
    const cordoned = nodes.make('c').node;
    cordoned.cordoned = true;
    const retired = nodes.make('r').node;
    retired.retired = true;
    const over = nodes.make('q', { spilloverThreshold: 0 });
    over.use(1);
    const now = clock.now();
    expect(eligibility(cordoned, DOOR_REQUEST, now, true, 1)).toBe(BAR_CORDONED);
    expect(eligibility(retired, DOOR_REQUEST, now, true, 1)).toBe(BAR_RETIRED);
    expect(eligibility(nodes.make('u').node, DOOR_REQUEST, now, true, UNPRICED)).toBe(BAR_UNPRICED);
    expect(eligibility(over.node, DOOR_REQUEST, now, true, 1)).toBe(BAR_OVER_QUOTA);
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
    seen.push(eligibility(node, DOOR_SUBSCRIPTION, now, false, UNPRICED));
    node.retired = false;
    seen.push(eligibility(node, DOOR_SUBSCRIPTION, now, false, UNPRICED));
    node.cordoned = false;
    seen.push(eligibility(node, DOOR_SUBSCRIPTION, now, false, UNPRICED));
    // The request door has no door check: the penalty is next.
    seen.push(eligibility(node, DOOR_REQUEST, now, false, UNPRICED));
    seen.push(eligibility(node, DOOR_REQUEST, now, true, UNPRICED));
    seen.push(eligibility(node, DOOR_REQUEST, now, true, 1));
    expect(seen).toEqual([
      BAR_RETIRED,
      BAR_CORDONED,
      BAR_CLOSED_DOOR,
      BAR_PENALIZED,
      BAR_UNPRICED,
      BAR_OVER_QUOTA,
    ]);
  });

  it('splits into the node stage and the work stage (a batch prices each element)', () => {
    const { node, use } = nodes.make('s', { spilloverThreshold: 0 });
    use(1);
    expect(nodeBar(node, DOOR_REQUEST, clock.now(), false)).toBe(BAR_NONE);
    expect(workBar(node, UNPRICED)).toBe(BAR_UNPRICED);
    expect(workBar(node, 1)).toBe(BAR_OVER_QUOTA);
  });

  it('passes over a removed or cordoned node silently and counts a skip for the rest', () => {
    const quiet: Bar[] = [BAR_RETIRED, BAR_CORDONED, BAR_NONE];
    expect(quiet.map(passedOver)).toEqual([true, true, false]);
    const all: Bar[] = [
      BAR_RETIRED,
      BAR_CORDONED,
      BAR_CLOSED_DOOR,
      BAR_PENALIZED,
      BAR_UNPRICED,
      BAR_OVER_QUOTA,
    ];
    expect(all.map(skipReasonOf)).toEqual([
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
    expect(takeLimits(node, clock.now(), DOOR_REQUEST, HELD_NONE)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
    expect(takeLimits(node, clock.now(), DOOR_REQUEST, HELD_NONE)).toBe(SATURATED);
    expect(node.crowded).toBe(1);
    // An attempt that holds its permit takes only a token for its next element.
    expect(takeLimits(node, clock.now(), DOOR_REQUEST, HELD_ALL)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
  });

  it('takes a token and no permit for a subscription', () => {
    const { node } = nodes.make('s', { maxConcurrent: 1 });
    expect(node.permits.tryAcquire()).toBe(true);
    expect(takeLimits(node, clock.now(), DOOR_SUBSCRIPTION, HELD_NONE)).toBe(0);
    expect(node.permits.inFlight).toBe(1);
  });

  it('answers the wait for the next token and gives back the permit it took', () => {
    const { node } = nodes.make('t', { rpsLimit: 1, maxConcurrent: 1 });
    expect(takeLimits(node, clock.now(), DOOR_REQUEST, HELD_NONE)).toBe(0);
    node.permits.release();
    expect(takeLimits(node, clock.now(), DOOR_REQUEST, HELD_NONE)).toBe(1000);
    expect(node.permits.inFlight).toBe(0);
    expect(takeLimits(node, clock.now(), DOOR_SUBSCRIPTION, HELD_NONE)).toBe(1000);
    clock.advance(1000);
    expect(takeLimits(node, clock.now(), DOOR_SUBSCRIPTION, HELD_NONE)).toBe(0);
    expect(node.wanted).toBe(4);
  });
});
