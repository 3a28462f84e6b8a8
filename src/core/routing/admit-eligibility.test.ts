/** admit() asks the one eligibility rule: the per-node checks and the skips they count. */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { UNPRICED } from '../config/types.js';
import { SkipReason } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import { TEST_REGISTRY } from '../../../test/support/node-config.js';
import { AdmissionRound, admit, type Candidate, type CandidateGroup } from './admission.js';
import type { Attempt } from './attempt.js';
import { HELD_NODE } from './eligibility.js';
import { buildTable } from './routing-table.js';
import { TriedNodes } from './tried-nodes.js';

const clock = new ManualClock();
const nodes = fakeNodes(clock);

afterEach(() => nodes.close());

/** A group of candidates with method ids `methodIds`, recording what was taken. */
function group(...methodIds: number[]): CandidateGroup & { taken: number[] } {
  const candidates: Candidate[] = methodIds.map((methodId) => ({
    methodId,
    tried: new TriedNodes(),
  }));
  const taken: number[] = [];
  return {
    size: candidates.length,
    taken,
    candidate: (index) => (taken.includes(index) ? undefined : candidates[index]),
    take: (index: number, _attempt: Attempt) => void taken.push(index),
  };
}

function roundOver(all: UpstreamNode[], failOpen = false): AdmissionRound {
  return new AdmissionRound(buildTable(all), clock.now(), failOpen);
}

describe('admit() and the eligibility rule', () => {
  it('passes over a cordoned node without a skip, and admits it again once uncordoned', () => {
    const { node, skips } = nodes.make('c');
    node.cordoned = true;
    const round = roundOver([node]);
    expect(admit(node, group(0), round, clock.now())).toBeUndefined();
    expect(skips).toEqual([]);
    node.cordoned = false;
    const attempt = admit(node, group(0), round, clock.now());
    expect(attempt?.taken).toBe(1);
    attempt?.release();
  });

  it('gives back a permit waited for on a node cordoned meanwhile', () => {
    const { node } = nodes.make('w', { maxConcurrent: 1 });
    expect(node.permits.tryAcquire()).toBe(true);
    node.cordoned = true;
    expect(admit(node, group(0), roundOver([node]), clock.now(), HELD_NODE)).toBeUndefined();
    expect(node.permits.inFlight).toBe(0);
  });

  it('counts a penalty once per node, and walks it when failing open', () => {
    const { node, skips } = nodes.make('p');
    node.penalty.penalize(clock.now(), 0);
    const round = roundOver([node]);
    expect(admit(node, group(0, 1), round, clock.now())).toBeUndefined();
    expect(skips).toEqual([SkipReason.penalized]);
    expect(round.sawPenalized).toBe(true);
    const attempt = admit(node, group(0, 1), roundOver([node], true), clock.now());
    expect(attempt?.taken).toBe(2);
    attempt?.release();
  });

  it('counts method_unsupported once for the unpriced elements and quota once, no permit spent', () => {
    const priced = TEST_REGISTRY.intern('eligibility_priced');
    const { node, skips, use } = nodes.make('q', {
      prices: { eligibility_priced: 1 },
      unknownCost: UNPRICED,
      spilloverThreshold: 0,
    });
    use(1);
    // Two unpriced elements (ids past the node's table), then a priced one the quota refuses.
    const batch = group(TEST_REGISTRY.size + 1, TEST_REGISTRY.size + 2, priced);
    expect(admit(node, batch, roundOver([node]), clock.now())).toBeUndefined();
    expect(skips).toEqual([SkipReason.quotaExhausted, SkipReason.methodUnsupported]);
    expect(node.permits.inFlight).toBe(0);
  });

  it('counts saturated and rate_limit as before, keeping the permit only with a taken element', () => {
    const full = nodes.make('full', { maxConcurrent: 1 });
    expect(full.node.permits.tryAcquire()).toBe(true);
    const round = roundOver([full.node]);
    expect(admit(full.node, group(0), round, clock.now())).toBeUndefined();
    expect(full.skips).toEqual([SkipReason.saturated]);
    expect(round.firstSaturated).toBe(full.node);

    const slow = nodes.make('slow', { rpsLimit: 1 });
    const batch = group(0, 1);
    const slowRound = roundOver([slow.node]);
    const attempt = admit(slow.node, batch, slowRound, clock.now());
    expect(attempt?.taken).toBe(1);
    expect(slow.skips).toEqual([SkipReason.rateLimit]);
    expect(slowRound.minWait).toBe(1000);
    expect(slow.node.permits.inFlight).toBe(1);
    attempt?.release();
    expect(admit(slow.node, group(0), slowRound, clock.now())).toBeUndefined();
    expect(slow.node.permits.inFlight).toBe(0);
  });
});
