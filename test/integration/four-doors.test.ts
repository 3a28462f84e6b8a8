/**
 * One table, four doors (issue 25): every routing scenario below runs through each of the four
 * ways a request enters cascade — an HTTP request, an HTTP batch element, a WebSocket request
 * and a WebSocket batch element — and must end the same way in each: the same node serves (the
 * recording upstreams say which node got the request, and the answer carries its name), the
 * client gets the same answer, and the same counters move by the same amounts (attempts per
 * node, skips by reason, cache results, credits booked and saved, hedges). docs/routing.md and
 * the README promise it: a batch element and a socket request are routed exactly like the
 * request sent alone over HTTP.
 *
 * Each (scenario, door) gets a fresh cascade on a ManualClock: no token refills, no penalty
 * runs out, no deadline or hedge fires unless the test moves the clock, and a "slow" node
 * holds its answer until the test releases it — nothing depends on how fast the machine is.
 * In the batch doors the scenario's request is one element of two; the other (a filler only
 * the `filler` node serves) is kept out of the compared counters (test/support/doors.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CacheConfig, RoutingConfig } from '../../src/core/config/types.js';
import {
  DOORS,
  FILLER_METHOD,
  behindAnswer,
  metricDeltas,
  nodeAnswer,
  openDoor,
  startDoorsStage,
  type Door,
  type DoorName,
  type DoorNodeSpec,
  type DoorReply,
  type DoorRequest,
  type DoorsStage,
} from '../support/doors.js';
import { metricValue, routingWith } from '../support/routing-config.js';
import { closeUpstreams } from '../support/upstreams.js';
import type { Json } from '../support/ws-client.js';

const ACCOUNT = 'Acct1111111111111111111111111111111111111111';
const ALL_FAILED = 'All nodes failed with server/network errors (no rate limits to wait for)';

/** A cache that stores what it may and coalesces, as the demo runs it. */
const CACHE_ON: CacheConfig = {
  enabled: true,
  coalesce: true,
  maxBytes: 1 << 20,
  maxEntryBytes: 64 * 1024,
  ttlMs: 400,
  evmFinalityDepth: undefined,
  responseHeader: false,
  methods: new Map(),
};

/** What a scenario's test holds while it runs. */
interface Run {
  readonly stage: DoorsStage;
  readonly door: Door;
  /** The scenario's request with `id`. */
  request(id: number | string): DoorRequest;
  /** Sends a request over plain HTTP (set-up traffic, not the door under test). */
  warmUp(id: string): Promise<unknown>;
}

interface Scenario {
  readonly name: string;
  readonly nodes: readonly DoorNodeSpec[];
  readonly method: string;
  readonly params: unknown[];
  readonly routing?: RoutingConfig;
  readonly cache?: CacheConfig;
  /** Puts the fleet in the scenario's state (before the metrics are read). */
  prepare?(run: Run): Promise<void> | void;
  /** Sends the scenario's traffic through the door; default: one request, id 7. */
  act?(run: Run): Promise<DoorReply[]>;
  /** Runs after the last scrape (lets held set-up traffic go). */
  finish?(run: Run): Promise<void>;
  /** The answers of `act`, in order. */
  readonly answers: readonly Json[];
  /** The HTTP status of the plain HTTP door's answers (default 200). */
  readonly status?: number;
  /** Requests of the scenario's method each node received during `act`. */
  readonly received: Record<string, number>;
  /** Every compared counter that moved during `act`, and by how much. */
  readonly metrics: Record<string, number>;
}

const attempts = (node: string, outcome = 'success') =>
  `rpc_upstream_attempts_total{node="${node}",outcome="${outcome}"}`;
const skips = (node: string, reason: string) =>
  `rpc_upstream_skips_total{node="${node}",reason="${reason}"}`;
const used = (node: string) => `rpc_node_quota_used{node="${node}"}`;
const saved = (node: string) => `rpc_credits_saved_total{node="${node}"}`;
const cached = (method: string, result: string) =>
  `rpc_cache_requests_total{method="${method}",result="${result}"}`;
const hedges = (event: string) => `cascade_hedges_total{event="${event}"}`;

const node = (name: string, tier: number, more: Partial<DoorNodeSpec> = {}): DoorNodeSpec => ({
  name,
  tier,
  prices: { getAccountInfo: 1 },
  ...more,
});

/** Waits for an event until `check` holds (expect.poll's bound only ends a hung test). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await expect.poll(check, { interval: 5, message: what }).toBe(true);
}

/** The sum of `name{labels}` in the stage's /metrics now. */
async function counter(
  stage: DoorsStage,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  return metricValue(await (await fetch(`${stage.url}/metrics`)).text(), name, labels);
}

/** The counters a request served by `name` moves: a cache miss, one attempt, `credits` booked. */
function servedBy(name: string, method: string, credits: number): Record<string, number> {
  return { [cached(method, 'miss')]: 1, [attempts(name)]: 1, [used(name)]: credits };
}

/** Requests 1 and 2, both answered by a's one call: the second one was a cache `how`. */
function onceForTwo(method: string, credits: number, how: 'hit' | 'coalesced') {
  return {
    answers: [nodeAnswer('a', method, 1), nodeAnswer('a', method, 2)],
    received: { a: 1, b: 0 },
    metrics: { ...servedBy('a', method, credits), [cached(method, how)]: 1, [saved('a')]: credits },
  };
}

/** The request most scenarios send. */
const ACCOUNT_INFO = { method: 'getAccountInfo', params: [ACCOUNT] };

/**
 * A getAccountInfo scenario in which `a` (tier 1) is passed over — counted as a skip for
 * `skipped`, when given — and b (tier 2) serves, at 1 credit.
 */
function bServes(
  name: string,
  a: DoorNodeSpec,
  skipped: string | undefined,
  prepare: NonNullable<Scenario['prepare']>,
): Scenario {
  return {
    name,
    nodes: [a, node('b', 2)],
    ...ACCOUNT_INFO,
    prepare,
    answers: [nodeAnswer('b', 'getAccountInfo', 7)],
    received: { a: 0, b: 1 },
    metrics: {
      ...servedBy('b', 'getAccountInfo', 1),
      ...(skipped === undefined ? {} : { [skips('a', skipped)]: 1 }),
    },
  };
}

/** Prepares with one warm-up request over HTTP, which a must have received. */
async function warmUpOnA(run: Run): Promise<void> {
  await run.warmUp('warm');
  expect(run.stage.nodes.a!.count('getAccountInfo')).toBe(1);
}

const SCENARIOS: readonly Scenario[] = [
  bServes(
    'spillover: tier 1 past its spillover threshold, tier 2 serves',
    // monthly 10 at 95 % → threshold 9; the warm-up books 10.
    node('a', 1, { monthlyLimit: 10, prices: { getAccountInfo: 10 } }),
    'quota_exhausted',
    warmUpOnA,
  ),
  {
    name: 'quota threshold: usage exactly at the threshold still serves (skipped only past it)',
    // monthly 20 at 95 % → threshold 19; the warm-up books exactly 19.
    nodes: [node('a', 1, { monthlyLimit: 20, prices: { getAccountInfo: 19 } }), node('b', 2)],
    ...ACCOUNT_INFO,
    async prepare(run) {
      await run.warmUp('warm');
    },
    answers: [nodeAnswer('a', 'getAccountInfo', 7)],
    received: { a: 1, b: 0 },
    metrics: servedBy('a', 'getAccountInfo', 19),
  },
  bServes(
    'limit skip: a node out of rate tokens (rps_limit) is skipped',
    // The ManualClock never refills the one token the warm-up spends.
    node('a', 1, { rpsLimit: 1 }),
    'rate_limit',
    warmUpOnA,
  ),
  {
    ...bServes(
      'limit skip: a node at max_concurrent is skipped',
      node('a', 1, { maxConcurrent: 1 }),
      'saturated',
      async (run) => {
        const a = run.stage.nodes.a!;
        a.setMode('hold');
        held = run.warmUp('warm');
        await until(() => a.held === 1, 'the warm-up holds a’s one permit');
      },
    ),
    async finish(run) {
      run.stage.nodes.a!.release();
      await held;
    },
  },
  bServes(
    'cordon: a node cordoned through the admin API gets nothing',
    node('a', 1),
    undefined,
    async (run) => {
      const response = await fetch(`${run.stage.admin}/admin/nodes/a/cordon`, { method: 'POST' });
      expect(await response.json()).toEqual({ node: 'a', cordoned: true });
    },
  ),
  bServes('penalty: a penalized node is skipped', node('a', 1), 'penalized', async (run) => {
    // "Node is behind" is the node's fault: a is penalized (5 s that never pass here).
    const a = run.stage.nodes.a!;
    a.setMode('behind');
    await run.warmUp('warm');
    a.setMode('answer');
    expect(run.stage.nodes.b!.count('getAccountInfo')).toBe(1);
  }),
  {
    name: 'latency strategy: a latency method goes to the fastest node, not the cheapest tier',
    nodes: [
      node('slow', 1, { prices: { getLatestBlockhash: 1 } }),
      node('fast', 2, { prices: { getLatestBlockhash: 1 } }),
    ],
    method: 'getLatestBlockhash',
    params: [],
    routing: routingWith({ getLatestBlockhash: { strategy: 'latency' } }),
    prepare(run) {
      // Measured latencies, as answers would have set them: slow 80 ms, fast 2 ms.
      const topology = run.stage.cascade.server.topology;
      for (const one of topology.table.all) {
        if (one.name === 'slow') one.ema.observe(80);
        if (one.name === 'fast') one.ema.observe(2);
      }
      topology.rank();
    },
    answers: [nodeAnswer('fast', 'getLatestBlockhash', 7)],
    received: { slow: 0, fast: 1 },
    metrics: servedBy('fast', 'getLatestBlockhash', 1),
  },
  {
    name: 'hedge: the first node holds the answer, the hedge answers',
    nodes: [node('a', 1), node('b', 2)],
    ...ACCOUNT_INFO,
    // Every hedgeable request earns a whole hedge: the first one may be hedged.
    routing: routingWith({ getAccountInfo: { hedgeAfterMs: 50 } }, { hedgeMaxShare: 1 }),
    prepare(run) {
      run.stage.nodes.a!.setMode('hold');
    },
    async act(run) {
      const { a, b } = run.stage.nodes;
      const reply = run.door.send(run.request(7));
      reply.catch(() => undefined); // awaited below unless a wait fails first
      await until(() => a!.held === 1, 'the first attempt reaches a and is held');
      await run.stage.clock.advanceAsync(50);
      // The hedge is decided in-process when the clock passes hedge_after_ms (advanceAsync
      // lets that settle): the counter says whether one was sent, without a wall-clock wait.
      const sent = await counter(run.stage, 'cascade_hedges_total', { event: 'sent' });
      expect.soft(sent, 'hedges sent once the first attempt is 50 ms old').toBe(1);
      if (sent === 1) {
        await until(() => b!.count('getAccountInfo') === 1, 'the hedge reaches b');
      } else {
        // Not hedged (a failing row): let the first attempt's deadline pass so the request
        // ends, and the rest of the row reports how it ended instead.
        await run.stage.clock.advanceAsync(500);
      }
      const answered = await reply;
      // The losing attempt is cancelled: a sees its connection close.
      await until(() => a!.held === 0, 'the held attempt on a ends');
      return [answered];
    },
    answers: [nodeAnswer('b', 'getAccountInfo', 7)],
    received: { a: 1, b: 1 },
    metrics: {
      ...servedBy('b', 'getAccountInfo', 1),
      [hedges('sent')]: 1,
      [hedges('won')]: 1,
      [hedges('cancelled')]: 1,
      [used('a')]: 1,
    },
  },
  {
    name: 'cache hit: a second identical cacheable request is answered from the cache',
    nodes: [node('a', 1, { prices: { getGenesisHash: 3 } }), node('b', 2)],
    method: 'getGenesisHash',
    params: [],
    cache: CACHE_ON,
    async act(run) {
      const first = await run.door.send(run.request(1));
      const second = await run.door.send(run.request(2));
      return [first, second];
    },
    ...onceForTwo('getGenesisHash', 3, 'hit'),
  },
  {
    name: 'coalescing: two identical requests in flight make one upstream call',
    nodes: [node('a', 1, { prices: { getAccountInfo: 2 } }), node('b', 2)],
    ...ACCOUNT_INFO,
    cache: CACHE_ON,
    prepare(run) {
      run.stage.nodes.a!.setMode('hold');
    },
    async act(run) {
      const a = run.stage.nodes.a!;
      const first = run.door.send(run.request(1));
      first.catch(() => undefined); // awaited below unless a wait fails first
      await until(() => a.held === 1, 'the first request is held on a');
      const second = run.door.send(run.request(2));
      // Either the second waits on the first (coalesced) or it reached a node too.
      const labels = { method: 'getAccountInfo', result: 'coalesced' };
      await until(
        async () =>
          (await counter(run.stage, 'rpc_cache_requests_total', labels)) === 1 ||
          a.count('getAccountInfo') + run.stage.nodes.b!.count('getAccountInfo') === 2,
        'the second request coalesced or went upstream',
      );
      a.release();
      return Promise.all([first, second]);
    },
    ...onceForTwo('getAccountInfo', 2, 'coalesced'),
  },
  {
    name: 'routing failure: every node unreachable → 502 All nodes failed, with the client id',
    nodes: [node('a', 1, { dead: true }), node('b', 2, { dead: true })],
    ...ACCOUNT_INFO,
    answers: [{ jsonrpc: '2.0', error: { code: -32000, message: ALL_FAILED }, id: 7 }],
    status: 502,
    received: {},
    metrics: {
      [cached('getAccountInfo', 'miss')]: 1,
      [attempts('a', 'transport_error')]: 1,
      [attempts('b', 'transport_error')]: 1,
      // Never written to a connection: nothing is billed (attempt.ts refunds the booking).
    },
  },
  {
    name: 'routing failure: every node answers "behind" → the last node’s error, with the client id',
    nodes: [node('a', 1, { behindSlots: 1 }), node('b', 2, { behindSlots: 2 })],
    ...ACCOUNT_INFO,
    prepare(run) {
      run.stage.nodes.a!.setMode('behind');
      run.stage.nodes.b!.setMode('behind');
    },
    answers: [behindAnswer(2, 7)],
    received: { a: 1, b: 1 },
    metrics: {
      [cached('getAccountInfo', 'miss')]: 1,
      [attempts('a', 'retryable_rpc_error')]: 1,
      [attempts('b', 'retryable_rpc_error')]: 1,
      [used('a')]: 1,
      [used('b')]: 1,
    },
  },
];

const CACHE_SERIES = /^(rpc_cache_requests_total|rpc_credits_saved_total)\{/;

/** The cache series of `metrics` (`cache` true) or the others. */
function only(metrics: Record<string, number>, cache: boolean): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).filter(([key]) => CACHE_SERIES.test(key) === cache),
  );
}

/** The set-up request the concurrency scenario keeps in flight. */
let held: Promise<unknown> | undefined;
let stage: DoorsStage | undefined;
let door: Door | undefined;

afterEach(async () => {
  door?.close();
  door = undefined;
  for (const one of Object.values(stage?.nodes ?? {})) one.release();
  await held;
  held = undefined;
  await stage?.close();
  stage = undefined;
  await closeUpstreams();
});

describe.each(SCENARIOS)('$name', (scenario) => {
  it.each(DOORS)('through the %s door', async (doorName: DoorName) => {
    stage = await startDoorsStage(scenario.nodes, {
      routing: scenario.routing,
      cache: scenario.cache,
    });
    const s = stage;
    const request = (id: number | string): DoorRequest => ({
      method: scenario.method,
      params: scenario.params,
      id,
    });
    const run: Run = {
      stage: s,
      door: (door = await openDoor(doorName, s)),
      request,
      async warmUp(id) {
        const response = await fetch(s.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // Params of its own: the warm-up is never coalesced with the scenario's request.
          body: JSON.stringify({ jsonrpc: '2.0', ...request(id), params: [`warm-up-${id}`] }),
        });
        return response.json();
      },
    };
    await scenario.prepare?.(run);
    const countsBefore = Object.fromEntries(
      Object.keys(scenario.received).map((name) => [name, s.nodes[name]!.count(scenario.method)]),
    );
    const before = await s.scrape();

    const replies = await (scenario.act?.(run) ?? run.door.send(request(7)).then((r) => [r]));

    const after = await s.scrape();
    await scenario.finish?.(run);
    // Soft checks: a failing row reports every way its door differs, not just the first.
    // The same answers, with the client's ids.
    expect
      .soft(
        replies.map((r) => r.answer),
        'the answers',
      )
      .toEqual(scenario.answers);
    const expectedStatus =
      doorName === 'http'
        ? (scenario.status ?? 200)
        : doorName === 'http batch element'
          ? 200
          : undefined;
    for (const reply of replies) {
      expect.soft(reply.status, 'the HTTP status').toBe(expectedStatus);
      if (doorName.endsWith('batch element')) {
        // The other element of the batch was served, and by the filler node only.
        expect
          .soft(reply.filler, 'the filler element')
          .toMatchObject({ result: { node: 'filler', method: FILLER_METHOD } });
      }
    }
    // The same node choice: who received the scenario's request.
    const received = Object.fromEntries(
      Object.keys(scenario.received).map((name) => [
        name,
        s.nodes[name]!.count(scenario.method) - countsBefore[name]!,
      ]),
    );
    expect.soft(received, 'requests each node received').toEqual(scenario.received);
    // The same counters, moved by the same amounts (nothing else moved).
    const moved = metricDeltas(before, after);
    expect
      .soft(only(moved, false), 'routing counters (attempts, skips, credits booked, hedges)')
      .toEqual(only(scenario.metrics, false));
    expect
      .soft(only(moved, true), 'cache counters (cache results, credits saved)')
      .toEqual(only(scenario.metrics, true));
  });
});
