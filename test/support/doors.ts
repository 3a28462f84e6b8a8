/**
 * "One table, four doors": one JSON-RPC request sent through a chosen door — a plain HTTP POST,
 * an element of an HTTP batch, a WebSocket message, an element of a WebSocket batch — in front
 * of recording upstreams the test controls (hold, release, fail on command), so a scenario can
 * be run through every door and checked for the same node, the same answer and the same
 * metrics.
 *
 * In the batch doors the scenario's request travels with one filler element (`getBalance` with
 * params of its own, never coalesced with anything) that only the `filler` node prices: the
 * scenario's nodes never see it, and the filler node never serves a scenario method (it is
 * skipped there as `method_unsupported`, in every door alike). `metricDeltas` leaves the
 * filler's series out, so what remains is the scenario's own traffic.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'vitest';
import { deltas, parseExposition, type Exposition } from '../../src/bench/prometheus-text.js';
import { ManualClock } from '../../src/core/clock.js';
import type {
  CacheConfig,
  Config,
  NodeConfig,
  RoutingConfig,
  ServerConfig,
} from '../../src/core/config/types.js';
import type { Cascade } from '../../src/core/service.js';
import { freePort } from './free-port.js';
import { nodeConfig, priceList } from './node-config.js';
import { serverConfig } from './proxy-harness.js';
import { startTestCascade } from './test-cascade.js';
import { makeTempDir, type TempDir } from './temp-dir.js';
import { startUpstream } from './upstreams.js';
import { WsTestClient, type Json } from './ws-client.js';

/** The filler element's method (priced only by the filler node). */
export const FILLER_METHOD = 'getBalance';
/** The node that serves the batch doors' filler element. */
export const FILLER_NODE = 'filler';

/** One JSON-RPC element as the upstream read it. */
export interface Received {
  readonly method: string;
  readonly id: unknown;
  readonly params: unknown;
}

/** What a door node does with the requests it gets. */
export type DoorNodeMode =
  /** Answers every element `{"result": {"node": <name>, "method": <method>}}` with its id. */
  | 'answer'
  /** Holds every request until `release()` (or `answer()`). */
  | 'hold'
  /** Answers every element `-32005 Node is behind by <n> slots` (the node's fault). */
  | 'behind';

/**
 * A recording upstream: every element it receives is kept (batch elements one by one), and
 * `events` emits `request` for each HTTP request it gets.
 */
export interface DoorNode {
  readonly name: string;
  readonly url: string;
  readonly received: readonly Received[];
  /** Requests (HTTP exchanges) being held right now. */
  readonly held: number;
  readonly events: EventEmitter;
  /** Elements of `method` received so far. */
  count(method: string): number;
  setMode(mode: DoorNodeMode): void;
  /** Answers every held request (as `answer` would), and goes back to `answer`. */
  release(): void;
}

/** The answer the door node `node` gives an element: what every door must hand back. */
export function nodeAnswer(node: string, method: string, id: unknown): Json {
  return { jsonrpc: '2.0', id, result: { node, method } };
}

/** The error a door node in `behind` mode gives (`slots` tells the nodes apart). */
export function behindAnswer(slots: number, id: unknown): Json {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32005, message: `Node is behind by ${slots} slots` },
  };
}

/** Starts a door node on 127.0.0.1 (port 0); closed by `closeUpstreams`. */
export async function startDoorNode(name: string, behindSlots = 1): Promise<DoorNode> {
  const received: Received[] = [];
  const events = new EventEmitter();
  const waiting: Array<() => void> = [];
  let mode: DoorNodeMode = 'answer';
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      const elements = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{
        id?: unknown;
        method: string;
        params?: unknown;
      }>;
      for (const e of elements) received.push({ method: e.method, id: e.id, params: e.params });
      const answerWith = (behind: boolean): void => {
        if (res.destroyed) return;
        const answers = elements.map((e) =>
          behind ? behindAnswer(behindSlots, e.id ?? null) : nodeAnswer(name, e.method, e.id),
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      };
      if (mode === 'hold') {
        const answer = (): void => answerWith(false);
        waiting.push(answer);
        res.once('close', () => {
          const at = waiting.indexOf(answer);
          if (at !== -1) waiting.splice(at, 1);
          events.emit('released');
        });
      } else {
        answerWith(mode === 'behind');
      }
      events.emit('request', elements);
    });
  };
  const url = await startUpstream(handler);
  return {
    name,
    url,
    received,
    events,
    get held() {
      return waiting.length;
    },
    count: (method) => received.filter((r) => r.method === method).length,
    setMode(next) {
      mode = next;
    },
    release() {
      mode = 'answer';
      for (const answer of waiting.splice(0)) answer();
    },
  };
}

/** One node of a doors topology (tier, limits, quota as in NodeConfig). */
export interface DoorNodeSpec extends Partial<
  Omit<NodeConfig, 'name' | 'pricing' | 'url' | 'redactedUrl'>
> {
  readonly name: string;
  /** Credits per method; methods not named are not served (no fallback price). */
  readonly prices?: Record<string, number>;
  /** Nothing listens on its port: every attempt is a connection failure. */
  readonly dead?: boolean;
  /** The slot count of its `behind` error. */
  readonly behindSlots?: number;
}

/** cascade (startCascade, as `cascade serve` runs it) in front of door nodes, on a ManualClock. */
export interface DoorsStage {
  readonly cascade: Cascade;
  readonly clock: ManualClock;
  readonly url: string;
  readonly wsUrl: string;
  readonly admin: string;
  /** The door nodes by name (dead nodes have none); the filler node included. */
  readonly nodes: Record<string, DoorNode>;
  scrape(): Promise<Exposition>;
  close(): Promise<void>;
}

/**
 * Starts the door nodes (plus the filler node, tier 0, pricing only FILLER_METHOD) and cascade
 * with its admin listener, routing and cache as given. The budget and attempt deadline run on
 * the ManualClock: nothing times out unless the test moves the clock.
 */
export async function startDoorsStage(
  specs: readonly DoorNodeSpec[],
  options: {
    routing?: RoutingConfig;
    cache?: CacheConfig;
    server?: Partial<ServerConfig>;
  } = {},
): Promise<DoorsStage> {
  const nodes: Record<string, DoorNode> = {};
  const configs: NodeConfig[] = [];
  const all: DoorNodeSpec[] = [
    { name: FILLER_NODE, tier: 0, prices: { [FILLER_METHOD]: 1 } },
    ...specs,
  ];
  for (const spec of all) {
    const { prices, dead, behindSlots, name, ...rest } = spec;
    let url: string;
    if (dead === true) {
      url = `http://127.0.0.1:${await freePort()}`;
    } else {
      const node = await startDoorNode(name, behindSlots);
      nodes[name] = node;
      url = node.url;
    }
    const monthlyLimit = rest.monthlyLimit;
    const spilloverThreshold =
      monthlyLimit === undefined ? Infinity : Math.floor((monthlyLimit * 95) / 100);
    configs.push(
      nodeConfig({
        spilloverThreshold,
        ...rest,
        name,
        url,
        redactedUrl: url,
        pricing: priceList(prices ?? {}),
      }),
    );
  }
  const temp: TempDir = makeTempDir('cascade-doors-');
  const clock = new ManualClock(1000);
  const config: Config = {
    path: '/test/config.toml',
    server: serverConfig({
      adminPort: 0,
      requestTimeoutMs: 1000,
      attemptTimeoutMs: 500,
      ...options.server,
    }),
    nodes: configs,
    routing: options.routing,
    // No [cache] table unless given: the product default, coalescing on and nothing stored.
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  };
  let started: Awaited<ReturnType<typeof startTestCascade>>;
  try {
    started = await startTestCascade(config, {
      quotasPath: temp.path('quotas.json'),
      clock,
    });
  } catch (err) {
    temp.cleanup();
    throw err;
  }
  const { cascade } = started;
  const port = cascade.server.port;
  const url = `http://127.0.0.1:${port}`;
  return {
    cascade,
    clock,
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    admin: `http://127.0.0.1:${cascade.adminPort}`,
    nodes,
    scrape: async () => parseExposition(await (await fetch(`${url}/metrics`)).text()),
    async close() {
      try {
        await cascade.close();
      } finally {
        temp.cleanup();
      }
    },
  };
}

/** The four doors. */
export type DoorName = 'http' | 'http batch element' | 'ws' | 'ws batch element';
export const DOORS: readonly DoorName[] = ['http', 'http batch element', 'ws', 'ws batch element'];

/** One request to send: its method, params and id. */
export interface DoorRequest {
  readonly method: string;
  readonly params: unknown[];
  readonly id: number | string;
}

/** What came back through a door for the scenario's request. */
export interface DoorReply {
  /** The scenario's answer (the element with its id, in a batch). */
  readonly answer: Json;
  /** The HTTP status (of the batch, for a batch door); undefined on a socket. */
  readonly status: number | undefined;
  /** The filler element's answer (batch doors), to check it did not disturb anything. */
  readonly filler: Json | undefined;
}

/** A door opened on a stage: `send` resolves with the request's reply. */
export interface Door {
  readonly name: DoorName;
  send(request: DoorRequest): Promise<DoorReply>;
  close(): void;
}

let fillers = 0;

function element(request: DoorRequest): Json {
  return { jsonrpc: '2.0', id: request.id, method: request.method, params: request.params };
}

function fillerElement(): Json {
  const n = ++fillers;
  return { jsonrpc: '2.0', id: `filler-${n}`, method: FILLER_METHOD, params: [`filler-${n}`] };
}

function batchReply(batch: unknown, id: unknown, status: number | undefined): DoorReply {
  if (!Array.isArray(batch)) throw new Error(`not a batch answer: ${JSON.stringify(batch)}`);
  const answers = batch as Json[];
  expect(answers).toHaveLength(2);
  return {
    answer: answers.find((a) => a.id === id)!,
    filler: answers.find((a) => typeof a.id === 'string' && a.id.startsWith('filler-')),
    status,
  };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/** Opens `name` on `stage` (a WebSocket door connects one client socket). */
export async function openDoor(
  name: DoorName,
  stage: Pick<DoorsStage, 'url' | 'wsUrl'>,
): Promise<Door> {
  switch (name) {
    case 'http':
      return {
        name,
        async send(request) {
          const { status, json } = await post(stage.url, element(request));
          return { answer: json as Json, status, filler: undefined };
        },
        close: () => undefined,
      };
    case 'http batch element':
      return {
        name,
        async send(request) {
          const { status, json } = await post(stage.url, [element(request), fillerElement()]);
          return batchReply(json, request.id, status);
        },
        close: () => undefined,
      };
    case 'ws':
    case 'ws batch element': {
      const client = await WsTestClient.open(stage.wsUrl);
      const batched = name === 'ws batch element';
      return {
        name,
        async send(request) {
          if (!batched) {
            client.send(element(request));
            const answer = await client.take((m) => !Array.isArray(m) && m.id === request.id);
            return { answer, status: undefined, filler: undefined };
          }
          client.send([element(request), fillerElement()]);
          const batch = await client.take(
            (m) => Array.isArray(m) && (m as Json[]).some((a) => a.id === request.id),
          );
          return batchReply(batch, request.id, undefined);
        },
        close: () => client.close(),
      };
    }
  }
}

/** Counters that must move the same whichever door a request came through. */
export const COMPARED_METRICS = [
  'rpc_upstream_attempts_total',
  'rpc_upstream_skips_total',
  'rpc_cache_requests_total',
  'rpc_credits_saved_total',
  'rpc_node_quota_used',
  'cascade_hedges_total',
] as const;

/**
 * The changes of COMPARED_METRICS between two scrapes, as `name{labels} → delta` (labels in
 * name order), without the filler node's series nor the filler method's.
 */
export function metricDeltas(before: Exposition, after: Exposition): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of COMPARED_METRICS) {
    for (const [key, delta] of deltas(before, after, name)) {
      if (key.includes(`node="${FILLER_NODE}"`) || key.includes(`method="${FILLER_METHOD}"`)) {
        continue;
      }
      out[key] = delta;
    }
  }
  return out;
}
