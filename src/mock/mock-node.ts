/**
 * Starting and stopping mock nodes: an http or https server per node, optionally behind a
 * simulated network path (rttMs) or a load balancer's idle close (idleCloseMs), every accepted
 * socket tracked so close() can end stalled requests too.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { StartupError } from '../core/errors.js';
import { DEFAULT_BEHAVIOUR, mergeBehaviour } from './behaviour.js';
import { CHAIN } from './chain-clock.js';
import { laggedView } from './lagged-view.js';
import { handOverAfterRtt, type DelayedSocket } from './delayed-socket.js';
import { FaultPicker } from './faults.js';
import { closeIdleConnections } from './idle-close.js';
import { MockMempool } from './mempool.js';
import { prepareMethodErrors } from './node-errors.js';
import { createRequestHandler, type NodeState } from './request-handler.js';
import { MOCK_METHODS, RpcResponder } from './rpc-responder.js';
import { StatsCounter } from './stats-counter.js';
import { generateTlsCertificate, type TlsCertificate } from './tls-certificate.js';
import { nodeMethodContext } from './transaction-intake.js';
import type { MockBehaviour, MockNode, MockNodeOptions } from './types.js';
import { DEFAULT_MOCK_CHAIN, MockChain } from './ws/mock-chain.js';
import { MockWsServer } from './ws/mock-ws-server.js';

/** Idle keep-alive connections live this long, like a provider's load balancer. */
const KEEP_ALIVE_MS = 65_000;

function checkOptions(options: MockNodeOptions): void {
  const { name, port = 0, rttMs = 0, idleCloseMs } = options;
  if (typeof name !== 'string' || name.length === 0) {
    throw new RangeError('mock node: name must be a non-empty string');
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(`mock node ${name}: port = ${port}; expected 0..65535`);
  }
  if (!Number.isFinite(rttMs) || rttMs < 0) {
    throw new RangeError(`mock node ${name}: rttMs = ${rttMs}; expected ≥ 0`);
  }
  if (idleCloseMs !== undefined && !(Number.isInteger(idleCloseMs) && idleCloseMs > 0)) {
    throw new RangeError(
      `mock node ${name}: idleCloseMs = ${idleCloseMs}; expected an integer > 0`,
    );
  }
  if (options.mempool !== undefined && !(options.mempool instanceof MockMempool)) {
    throw new RangeError(`mock node ${name}: mempool must be a MockMempool (new MockMempool())`);
  }
  if (options.chain !== undefined && !(options.chain instanceof MockChain)) {
    throw new RangeError(`mock node ${name}: chain must be a MockChain (new MockChain())`);
  }
}

/**
 * The node's method context on `chain`: what it accepts lands there (so every node following
 * the chain reports it, and WebSocket subscribers hear of it), and answers read its slots.
 */
function methodContext(
  options: MockNodeOptions,
  chain: MockChain,
  state: () => NodeState,
  stats: StatsCounter,
  mempool: MockMempool,
): ReturnType<typeof nodeMethodContext> {
  // The default chain follows the shared wall clock; answers read that clock as before.
  const view = chain === DEFAULT_MOCK_CHAIN ? CHAIN : chain;
  const base = nodeMethodContext(
    options.name,
    laggedView(view, () => state().behaviour.lag),
    mempool,
    () => state().behaviour.evmClient,
    stats,
  );
  return {
    ...base,
    admit(kind, id) {
      const admitted = base.admit(kind, id);
      if (admitted) chain.accept(kind, id);
      return admitted;
    },
    transactionStatus: (kind, id) => chain.statusOf(kind, id),
    account: (pubkey) => chain.account(pubkey),
    otherChain: () => state().behaviour.otherChain,
  };
}

function createState(options: MockNodeOptions, chain: MockChain): NodeState {
  const { name, mempool = new MockMempool() } = options;
  const stats = new StatsCounter();
  // Only behaviour keys are read from the options.
  const behaviour = mergeBehaviour(DEFAULT_BEHAVIOUR, options);
  const state: NodeState = {
    behaviour,
    picker: new FaultPicker(name),
    stats,
    responder: new RpcResponder(
      methodContext(options, chain, () => state, stats, mempool),
      MOCK_METHODS,
      stats,
    ),
    mempool,
  };
  state.responder.methodErrors = prepareMethodErrors(behaviour.methodErrors);
  state.picker.restart(behaviour.failFirst);
  return state;
}

function listen(server: net.Server, name: string, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        reject(new StartupError(`mock node ${name}: port ${port} is already in use (${where})`));
      } else if (err.code === 'EACCES') {
        reject(new StartupError(`mock node ${name}: permission denied to listen on ${where}`));
      } else {
        reject(new StartupError(`mock node ${name}: cannot listen on ${where}: ${err.message}`));
      }
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

async function certificateOf(tls: MockNodeOptions['tls']): Promise<TlsCertificate | undefined> {
  if (tls === true) return generateTlsCertificate();
  return tls || undefined;
}

/** Starts one mock node; rejects with StartupError when the port is taken. */
export async function startMockNode(options: MockNodeOptions): Promise<MockNode> {
  checkOptions(options);
  const { name, host = '127.0.0.1', port = 0, tls, rttMs = 0, idleCloseMs } = options;
  const chain = options.chain ?? DEFAULT_MOCK_CHAIN;
  const state = createState(options, chain);
  const certificate = await certificateOf(tls);
  const handler = createRequestHandler(state);
  const server = certificate
    ? https.createServer(certificate, handler)
    : http.createServer(handler);
  const ws = new MockWsServer(server, chain, () => state.responder);
  if (idleCloseMs === undefined) server.keepAliveTimeout = KEEP_ALIVE_MS;
  else closeIdleConnections(server, idleCloseMs);

  const sockets = new Set<Socket | DelayedSocket>();
  const remember = (socket: Socket | DelayedSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const accept = (socket: Socket) => {
    state.stats.connections++;
    remember(socket);
  };
  let listener: net.Server = server;
  if (rttMs > 0) {
    listener = net.createServer((raw) => {
      accept(raw);
      raw.setNoDelay(true);
      handOverAfterRtt(raw, rttMs, (socket) => {
        remember(socket);
        server.emit('connection', socket);
      });
    });
  } else {
    server.on('connection', accept);
  }
  await listen(listener, name, host, port);
  const boundPort = (listener.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    name,
    port: boundPort,
    url: `${certificate ? 'https' : 'http'}://${urlHost(host)}:${boundPort}`,
    wsUrl: `${certificate ? 'wss' : 'ws'}://${urlHost(host)}:${boundPort}`,
    ws,
    chain,
    ...(certificate ? { cert: certificate.cert } : {}),
    setBehaviour(next: Partial<MockBehaviour>) {
      const behaviour = mergeBehaviour(state.behaviour, next);
      if (next.methodErrors !== undefined) {
        state.responder.methodErrors = prepareMethodErrors(behaviour.methodErrors);
      }
      state.behaviour = behaviour;
      if (next.fault !== undefined || next.failFirst !== undefined) {
        state.picker.restart(state.behaviour.failFirst);
      }
    },
    behaviour: () => ({ ...state.behaviour }),
    stats: () => state.stats.snapshot(),
    resetStats: () => state.stats.reset(),
    mempool: state.mempool,
    accepted: () => state.mempool.accepted(name),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
        ws.close();
        for (const socket of sockets) socket.destroy();
        await closed;
        // Requests cut off above finish (their `close` events) a tick after the server does.
        await state.stats.idle();
      })();
      return closing;
    },
  };
}

/** Starts several nodes; if one fails, the others are closed and the first error is thrown. */
export async function startMockNodes(options: readonly MockNodeOptions[]): Promise<MockNode[]> {
  const settled = await Promise.allSettled(options.map((one) => startMockNode(one)));
  const failed = settled.find((result) => result.status === 'rejected');
  if (!failed) return settled.map((result) => (result as PromiseFulfilledResult<MockNode>).value);
  const started = settled.filter((result) => result.status === 'fulfilled');
  await Promise.all(started.map((result) => result.value.close()));
  throw failed.reason;
}
