/**
 * Hedged reads, driven by counts and held answers rather than wall time. The first node stalls
 * chosen requests (it holds them until the test ends); the proxy runs on a ManualClock, so a
 * hedge fires only when the test moves the clock past `hedge_after_ms`, and request durations
 * in the proxy's own histogram are measured on that clock. A stalled request is answered
 * while its stall still holds: its latency is the hedge delay, never the stall.
 */
import { EventEmitter, once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { RoutingConfig } from '../../src/core/config/types.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { metricValue, routingWith } from '../support/routing-config.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

const HEDGE_AFTER_MS = 50;
const ATTEMPT_TIMEOUT_MS = 500;
const PENALTY_OVER_MS = 7000;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** An upstream that stalls every request `stalls(n)` picks (n counts from 1) until closed. */
async function stallingUpstream(stalls: (n: number) => boolean) {
  const events = new EventEmitter();
  let received = 0;
  let held = 0;
  const url = await startUpstream((req, res) => {
    const n = ++received;
    req.resume();
    req.on('end', () => {
      if (!stalls(n)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: n, result: { value: n } }));
        return;
      }
      held++;
      res.once('close', () => {
        held--;
        events.emit('released');
      });
      events.emit('held', n);
    });
  });
  return {
    url,
    events,
    get received() {
      return received;
    },
    get held() {
      return held;
    },
  };
}

async function start(routing: RoutingConfig, stalls: (n: number) => boolean) {
  const clock = new ManualClock();
  const upstream = await stallingUpstream(stalls);
  harness = await startHarness(
    [
      // One permit: if a cancelled attempt kept it, the next request could not use this node.
      { name: 'first', tier: 0, maxConcurrent: 1 },
      { name: 'second', tier: 1 },
    ],
    { clock, routing, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, budgetMs: 2000 },
  );
  pointAt(harness, 'first', upstream.url);
  return { h: harness, clock, upstream };
}

/** Requests with `getAccountInfo`, one at a time; a stall moves the clock on until answered. */
async function run(
  h: Harness,
  clock: ManualClock,
  upstream: Awaited<ReturnType<typeof stallingUpstream>>,
  requests: number,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 1; i <= requests; i++) {
    const reply = h.post(rpc('getAccountInfo', i, ['11111111111111111111111111111111']));
    const stop = new AbortController();
    const first = await Promise.race([
      reply.then(() => 'answered' as const),
      once(upstream.events, 'held', { signal: stop.signal }).then(
        () => 'held' as const,
        () => 'answered' as const,
      ),
    ]);
    stop.abort();
    if (first === 'held') {
      const hedgesBefore = metricValue(await h.metrics(), 'cascade_hedges_total', {
        event: 'sent',
      });
      await clock.advanceAsync(HEDGE_AFTER_MS);
      const hedged =
        metricValue(await h.metrics(), 'cascade_hedges_total', { event: 'sent' }) > hedgesBefore;
      // No hedge allowed (the cap): the stalled attempt runs into its deadline, then retries.
      if (!hedged) await clock.advanceAsync(ATTEMPT_TIMEOUT_MS);
      statuses.push((await reply).status);
      // A deadline penalizes the node for 5 s: let it pass, so later stalls reach it too.
      if (!hedged) await clock.advanceAsync(PENALTY_OVER_MS);
      continue;
    }
    statuses.push((await reply).status);
  }
  return statuses;
}

/** How many requests took longer than `seconds` on the proxy's clock (from its histogram). */
function slowerThan(text: string, seconds: number): number {
  const total = metricValue(text, 'rpc_request_duration_seconds_count', { outcome: 'forwarded' });
  const within = metricValue(text, 'rpc_request_duration_seconds_bucket', {
    outcome: 'forwarded',
    le: String(seconds),
  });
  return total - within;
}

describe('hedged reads', () => {
  it('answers stalled reads from the hedge: p99 below the stall, hedges within the cap, permits freed', async () => {
    const routing = routingWith({ getAccountInfo: { hedgeAfterMs: HEDGE_AFTER_MS } });
    const { h, clock, upstream } = await start(routing, (n) => n % 20 === 0);
    const statuses = await run(h, clock, upstream, 100);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const text = await h.metrics();
    // Every request went to the first node first: cancelled attempts gave their permit back.
    expect(upstream.received).toBe(100);
    expect(metricValue(text, 'cascade_hedges_total', { event: 'sent' })).toBe(5);
    expect(metricValue(text, 'cascade_hedges_total', { event: 'won' })).toBe(5);
    expect(metricValue(text, 'cascade_hedges_total', { event: 'cancelled' })).toBe(5);
    // Hedges stay within 10% of the requests.
    expect(metricValue(text, 'cascade_hedges_total', { event: 'sent' })).toBeLessThanOrEqual(10);
    // Latency on the proxy's clock: not one request waited longer than the hedge delay.
    expect(slowerThan(text, 0.05)).toBe(0);
    // Cancelled means cancelled: the upstream saw every stalled request's connection close.
    while (upstream.held > 0) await once(upstream.events, 'released');
    expect(h.server.topology.table.all[0]!.permits.inFlight).toBe(0);
    // Nobody was penalized for a cancelled attempt.
    expect((await h.health()).nodes.map((n) => n.status)).not.toContain('down');
  });

  it('without hedging the same stalls cost the full attempt deadline (p99 ≥ the stall)', async () => {
    const { h, clock, upstream } = await start(routingWith({}), (n) => n % 20 === 0);
    const statuses = await run(h, clock, upstream, 40);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const text = await h.metrics();
    expect(slowerThan(text, 0.25)).toBe(2);
    expect(metricValue(text, 'cascade_hedges_total', { event: 'sent' })).toBe(0);
  });

  it('never hedges more than hedge_max_share of the requests, even when every fifth stalls', async () => {
    const routing = routingWith(
      { getAccountInfo: { hedgeAfterMs: HEDGE_AFTER_MS } },
      { hedgeMaxShare: 0.1 },
    );
    const { h, clock, upstream } = await start(routing, (n) => n % 5 === 0);
    const statuses = await run(h, clock, upstream, 50);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const sent = metricValue(await h.metrics(), 'cascade_hedges_total', { event: 'sent' });
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(5);
  });
});
