/**
 * What the /metrics integration tests share: a proxy harness closed after each test (with the
 * upstreams they started), and scrapes parsed with the one Prometheus text parser.
 */
import { afterEach, expect } from 'vitest';
import { deltas, parseExposition, type Exposition } from '../../src/bench/prometheus-text.js';
import { startHarness, type Harness, type TestNode } from './proxy-harness.js';
import { closeUpstreams } from './upstreams.js';

let harness: Harness | undefined;

/** Registers the afterEach that closes the harness `start` made and every held upstream. */
export function closeHarnessAfterEach(): void {
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await closeUpstreams();
  });
}

/** Starts the proxy harness the calling test uses (closed after it). */
export async function startProxy(
  nodes: readonly TestNode[],
  options?: Parameters<typeof startHarness>[1],
): Promise<Harness> {
  harness = await startHarness(nodes, options);
  return harness;
}

/** One scrape of /metrics, parsed. */
export async function scrape(h: Harness): Promise<Exposition> {
  return parseExposition(await h.metrics());
}

/**
 * Polls the scrape until `check` holds (no fixed sleeps). `timeoutMs` only bounds a failing
 * test: it is far past any event awaited here (the slowest is the 1 s ranking tick).
 */
export async function scrapeUntil(
  h: Harness,
  check: (e: Exposition) => boolean,
  timeoutMs = 15_000,
): Promise<Exposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exposition = await scrape(h);
    if (check(exposition)) return exposition;
    if (Date.now() > deadline) throw new Error('the scrape never matched');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The node labels present in a scrape. */
export function nodesIn(e: Exposition): Set<string> {
  return new Set(e.samples.flatMap((s) => (s.labels.node === undefined ? [] : [s.labels.node])));
}

/** Skip deltas across `act`, after `prepare` has run. */
export async function skipDeltas(
  h: Harness,
  act: () => Promise<unknown>,
): Promise<Map<string, number>> {
  const before = await scrape(h);
  await act();
  return deltas(before, await scrape(h), 'rpc_upstream_skips_total');
}

/** Only `node`'s `reason` skip counter moved (by at least one). */
export function expectOnlySkip(changed: Map<string, number>, node: string, reason: string): void {
  const own = `rpc_upstream_skips_total{node="${node}",reason="${reason}"}`;
  expect([...changed.keys()]).toEqual([own]);
  expect(changed.get(own)).toBeGreaterThanOrEqual(1);
}
