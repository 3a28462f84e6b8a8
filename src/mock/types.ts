/**
 * The in-process surface of a mock upstream node. The proxy's tests, the demo and the
 * benchmarks code against these shapes; keep them stable.
 */
import type { AcceptedTransaction, MockMempool } from './mempool.js';
import type { MockChain } from './ws/mock-chain.js';
import type { MockWsControl } from './ws/mock-ws-control.js';

/** How a request selected for failure is answered. */
export type MockFault =
  | { kind: 'none' }
  /** A plain HTTP answer: e.g. 429 + `{ 'retry-after': '7' }`, a 503 HTML page, 404, 204. */
  | {
      kind: 'http';
      status: number;
      /** Default: empty. */
      body?: string;
      /** Default: application/json when the body starts with `{` or `[`, else text/plain. */
      contentType?: string;
      headers?: Record<string, string>;
    }
  /** A JSON-RPC error object with the request id echoed (status default 200). */
  | {
      kind: 'rpc_error';
      code: number;
      message?: string;
      /** The error's `data` member: any JSON value (omitted when undefined). */
      data?: unknown;
      status?: number;
    }
  /** A body that is not JSON (status default 200). */
  | { kind: 'invalid_json'; status?: number }
  /** No body at all (status default 200). */
  | { kind: 'empty'; status?: number }
  /** Accept the request and never answer, until the node closes. */
  | { kind: 'stall' }
  /** Destroy the socket without answering. */
  | { kind: 'close' }
  /** Send the status line, headers and the first bytes of the body, then nothing until close. */
  | { kind: 'stall_body'; status?: number }
  /** Send the headers (full content-length) and half the body, then destroy the socket. */
  | { kind: 'truncate'; status?: number };

/** Every fault kind, in the order help texts list them. */
export const MOCK_FAULT_KINDS = [
  'none',
  'http',
  'rpc_error',
  'invalid_json',
  'empty',
  'stall',
  'close',
  'stall_body',
  'truncate',
] as const satisfies readonly MockFault['kind'][];

/**
 * A JSON-RPC error a node answers a call with, as real clients spell it (see node-errors.ts for
 * presets taken from their source).
 */
export interface MockRpcError {
  readonly code: number;
  readonly message: string;
  /** The error's `data` member: any JSON value (omitted when undefined). */
  readonly data?: unknown;
  /** HTTP status when it answers a single request (default 200; providers send 429 + a body). */
  readonly status?: number;
  /** Extra HTTP headers when it answers a single request (e.g. retry-after). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A method's error: an explicit MockRpcError, or a preset name with an optional argument,
 * `"geth.revert"` or `"geth.revert:ERC20: transfer amount exceeds balance"`.
 */
export type MethodErrorSpec = MockRpcError | string;

/** EVM clients whose "already known" answer a node can give for a resubmitted transaction. */
export const EVM_CLIENTS = ['geth', 'nethermind', 'besu', 'erigon', 'reth', 'anvil'] as const;
export type EvmClient = (typeof EVM_CLIENTS)[number];

/** What a node does with the next request; changeable at any time with setBehaviour. */
export interface MockBehaviour {
  /** Base latency before answering, ms. */
  delayMs: number;
  /** Added latency, uniform in [0, jitterMs). */
  jitterMs: number;
  /** Applied to the requests selected by failureRate / failFirst. */
  fault: MockFault;
  /** 0..1: fraction of requests that get `fault` (default 1: all of them). */
  failureRate: number;
  /** >0: the first N requests get `fault`, then the node recovers (overrides failureRate). */
  failFirst: number;
  /** 0 = natural size; >0 pads results so the whole body is about N bytes. */
  responseBytes: number;
  /**
   * Method name → the error every call of it gets (single calls and batch elements alike);
   * other methods answer normally. Deterministic: failureRate/failFirst do not apply.
   */
  methodErrors: Readonly<Record<string, MethodErrorSpec>>;
  /** Whose "already known" a resubmitted eth_sendRawTransaction gets (default geth). */
  evmClient: EvmClient;
  /**
   * Serve the chain this many slots (Solana) and blocks (EVM) behind its head, advancing at
   * the chain's pace, like a lagging replica; negative: ahead (a node reporting a future head).
   * Change it at run time to make a node jump. Default 0.
   */
  lag: number;
  /** Follow another chain: eth_chainId 5 and devnet's genesis hash instead of mainnet's. */
  otherChain: boolean;
}

/** How to start one mock node. */
export interface MockNodeOptions extends Partial<MockBehaviour> {
  name: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** true: https with a self-signed certificate generated at start (CN localhost). */
  tls?: boolean | { cert: string; key: string };
  /** Simulated network round trip, ms: a new connection pays one RTT, each flight RTT/2. */
  rttMs?: number;
  /**
   * Close keep-alive connections idle this long, with no `Keep-Alive: timeout=` hint, as cloud
   * load balancers do. Default: 65 s, announced in a Keep-Alive header (Node's default style).
   */
  idleCloseMs?: number;
  /** The transactions the node remembers; share one between nodes to model gossip. */
  mempool?: MockMempool;
  /**
   * The chain the node follows (slots, blocks, landed transactions, changed accounts). Default:
   * one wall-clock chain shared by every node of the process; tests pass `new MockChain({
   * manual: true })` to move it by hand.
   */
  chain?: MockChain;
}

/** Counters since start (or the last resetStats). */
export interface MockStats {
  /** JSON-RPC HTTP requests received (health and stats routes are not counted). */
  requests: number;
  /** Calls per method; each batch element counts once. */
  byMethod: Record<string, number>;
  /** Requests received and not yet answered (delayed and stalled ones included). */
  inFlight: number;
  /** Highest inFlight seen. */
  inFlightPeak: number;
  /** TCP connections accepted. */
  connections: number;
  /** Requests answered with the fault. */
  faults: number;
  /** Calls without an `id` member (answered with nothing, like geth and agave). */
  notifications: number;
  /** Calls answered with a JSON-RPC error, per method (method errors, -32601, -32602, …). */
  errorsByMethod: Record<string, number>;
  /** Transactions this node accepted into its mempool. */
  accepted: number;
  /** Submissions answered "already known" / "already processed". */
  alreadyKnown: number;
}

/** A running mock node. */
export interface MockNode {
  readonly name: string;
  /** `http(s)://127.0.0.1:PORT` */
  readonly url: string;
  /** `ws(s)://127.0.0.1:PORT`: the same port takes WebSocket upgrades (JSON-RPC and subscriptions). */
  readonly wsUrl: string;
  /** Faults and counters of the WebSocket endpoint. */
  readonly ws: MockWsControl;
  /** The chain the node follows. */
  readonly chain: MockChain;
  readonly port: number;
  /** PEM of the certificate when the node serves https; trust it as a CA. */
  readonly cert?: string;
  /** Takes effect for the next request; `setBehaviour({ fault: { kind: 'none' } })` heals. */
  setBehaviour(patch: Partial<MockBehaviour>): void;
  /** The current behaviour (a copy). */
  behaviour(): MockBehaviour;
  stats(): MockStats;
  resetStats(): void;
  /** The mempool this node admits transactions to (possibly shared with other nodes). */
  readonly mempool: MockMempool;
  /** The transactions this node accepted, oldest first (still in the mempool). */
  accepted(): AcceptedTransaction[];
  /** Closes the server and every open socket (stalled ones too); resolves when closed. */
  close(): Promise<void>;
}
