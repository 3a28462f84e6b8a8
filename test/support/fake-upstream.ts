/**
 * The one fake for the node seam in unit tests: real UpstreamNodes (permits, token bucket,
 * penalty, EMA, usage) on a ManualClock, whose transport is a script — no sockets, no real
 * time. A reply arrives `after` ms after the send; one slower than the attempt's deadline times
 * out at the deadline, as the real transport does; a cancelled attempt settles at once. The
 * routing tests drive a fleet of them (fake-fleet.ts); the eligibility tests make nodes one by
 * one (`fakeNodes`), with a usage the test sets and the skips they count kept in order.
 */
import type { ManualClock } from '../../src/core/clock.js';
import type { NodeConfig, WsPrices } from '../../src/core/config/types.js';
import type {
  AttemptCallback,
  AttemptControl,
  AttemptResponse,
  ForwardHeaders,
} from '../../src/core/node/attempt-response.js';
import { DeadlineQueue } from '../../src/core/node/deadline-queue.js';
import { UpstreamNode } from '../../src/core/node/upstream-node.js';
import { nodeConfig, priceList } from './node-config.js';

/** What a scripted node does with one request. */
export type Reply =
  | { readonly after: number; readonly status?: number; readonly body: string }
  /** A connection failure: `sent: false` means the request never reached the node. */
  | { readonly after: number; readonly fail: string; readonly sent?: boolean }
  /** Never answers: the attempt's deadline ends it. */
  | 'hang';

/** A node's script: its reply to the `call`-th request (from 1) it receives. */
export type Script = (body: string, call: number) => Reply;

/** Replies `result` after `after` ms, with the request's id. */
export function answers(result: unknown, after = 10): Script {
  return (body) => ({ after, body: withId(body, `"result":${JSON.stringify(result)}`) });
}

/** Replies the JSON-RPC error `code`/`message` after `after` ms. */
export function errors(code: number, message: string, after = 10): Script {
  const error = `"error":${JSON.stringify({ code, message })}`;
  return (body) => ({ after, body: withId(body, error) });
}

/** A reply for every element of a single request or a batch, echoing ids. */
function withId(body: string, member: string): string {
  const parsed: unknown = JSON.parse(body);
  const one = (request: { id?: unknown }): string =>
    `{"jsonrpc":"2.0","id":${JSON.stringify(request.id ?? null)},${member}}`;
  return Array.isArray(parsed)
    ? `[${parsed.map((r: { id?: unknown }) => one(r)).join(',')}]`
    : one(parsed as { id?: unknown });
}

/** A transport that runs a script on the manual clock. */
export class ScriptedTransport {
  readonly calls: string[] = [];

  constructor(
    readonly clock: ManualClock,
    public script: Script,
  ) {}

  send<T>(
    body: Buffer,
    timeoutMs: number,
    _headers: ForwardHeaders,
    _allowStream: boolean,
    done: AttemptCallback<T>,
    token: T,
  ): AttemptControl {
    const text = body.toString('utf8');
    this.calls.push(text);
    const reply = this.script(text, this.calls.length);
    let settled = false;
    const finish = (response: AttemptResponse): void => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      answer?.cancel();
      done(response, token);
    };
    const deadline = this.clock.setTimer(
      () => finish({ kind: 'transport_error', reason: 'timed out', timedOut: true, sent: true }),
      timeoutMs,
    );
    const answer =
      reply === 'hang' || reply.after >= timeoutMs
        ? undefined
        : this.clock.setTimer(() => finish(responseOf(reply)), reply.after);
    return {
      cancel: () =>
        finish({ kind: 'transport_error', reason: 'cancelled', timedOut: false, sent: true }),
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function responseOf(reply: Exclude<Reply, 'hang'>): AttemptResponse {
  if ('fail' in reply) {
    return {
      kind: 'transport_error',
      reason: reply.fail,
      timedOut: false,
      sent: reply.sent ?? true,
    };
  }
  return {
    kind: 'answer',
    status: reply.status ?? 200,
    contentType: 'application/json',
    retryAfter: undefined,
    body: Buffer.from(reply.body, 'utf8'),
  };
}

/** A fake node: the real node, its script, its counted skips (SkipReason values), its usage. */
export interface FakeNode {
  readonly node: UpstreamNode;
  readonly transport: ScriptedTransport;
  readonly skips: number[];
  /** Sets the credits the node has used. */
  readonly use: (credits: number) => void;
}

/** What fake nodes on one clock share: the clock, and the deadline queue on it. */
export interface FakeNodeDeps {
  readonly clock: ManualClock;
  readonly deadlines: DeadlineQueue;
}

/** The dependencies of fake nodes on `clock`. */
export function fakeNodeDeps(clock: ManualClock): FakeNodeDeps {
  return { clock, deadlines: new DeadlineQueue(clock) };
}

/** A real UpstreamNode for `config` whose transport is `script` (never answers by default). */
export function fakeNode(
  config: NodeConfig,
  deps: FakeNodeDeps,
  script: Script = () => 'hang',
): FakeNode {
  const skips: number[] = [];
  let used = 0;
  const usage = {
    get used() {
      return used;
    },
    add(credits: number) {
      used += credits;
    },
  };
  const metrics = {
    attempt: () => {},
    skip: (reason: number) => skips.push(reason),
    streamBroken: () => {},
  };
  const node = new UpstreamNode(config, usage, metrics, deps);
  const transport = new ScriptedTransport(deps.clock, script);
  // The seam: the node's transport is the script (the pool it made is never dialed).
  Object.defineProperty(node, 'transport', { value: transport });
  return { node, transport, skips, use: (credits) => (used = credits) };
}

/** Free [websocket] prices: the node takes subscriptions. */
export const FREE_WS: WsPrices = {
  connection: 0,
  subscribe: 0,
  unsubscribe: 0,
  notification: 0,
  tenthMb: 0,
};

/**
 * Makes fake nodes on `clock`, one by one. Options: `prices` (method → credits; other methods
 * unpriced unless `unknownCost`), `ws` (the [websocket] table, or null for none), `script`
 * (default: never answers), any NodeConfig field.
 */
export function fakeNodes(clock: ManualClock): {
  make(
    name: string,
    options?: Partial<Omit<NodeConfig, 'pricing'>> & {
      prices?: Record<string, number>;
      unknownCost?: number;
      ws?: WsPrices | null;
      script?: Script;
    },
  ): FakeNode;
  /** Kept for the tests' afterEach: a scripted transport holds nothing to release. */
  close(): Promise<void>;
} {
  const deps = fakeNodeDeps(clock);
  return {
    make(name, options = {}) {
      const { prices = {}, unknownCost = 1, ws = FREE_WS, script, ...rest } = options;
      const pricing = { ...priceList(prices, unknownCost), websocket: ws ?? undefined };
      return fakeNode(nodeConfig({ name, ...rest, pricing }), deps, script);
    },
    close: () => Promise.resolve(),
  };
}
