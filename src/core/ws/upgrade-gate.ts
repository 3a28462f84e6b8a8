/**
 * Who may open a WebSocket: an upgrade is checked for its path (which chain), its client key,
 * its page's origin and its IP's open connections, in that order, and refused with a plain HTTP
 * answer on the raw socket (counted by reason) or handed to the WebSocket server. The gateway
 * owns what happens after the handshake; this owns everything before it.
 */
import type { IncomingMessage } from 'node:http';
import type { BlockList } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { clientAddress } from '../http/client-address.js';
import { CorsPolicy } from '../http/cors.js';
import { callerOf, isCallerRefusal } from '../http/key-caller.js';
import type { ServedChain, ServedChains } from '../http/served-chains.js';
import { pathOf } from '../http/url-path.js';
import type { ClientKeys } from '../keys/client-keys.js';
import { presentedKey } from '../keys/presented-key.js';
import type { KeyedCaller } from '../serving/key-gate.js';
import type { GatewayCounters, WsLimits } from './gateway-context.js';

/** Takes a socket that passed the gate, once its handshake is done. */
export type AcceptUpgrade = (
  ws: WebSocket,
  ip: string,
  req: IncomingMessage,
  caller: KeyedCaller | undefined,
  chain: ServedChain,
  /** The secret the caller passed with (kept to check it again when the keys change). */
  presented: string | undefined,
) => void;

/** What the gate checks against, and where it sends a socket that passes. */
export interface UpgradeGateOptions {
  readonly chains: ServedChains;
  /** The proxy's client keys: an upgrade presents one as an HTTP request does. */
  readonly keys?: ClientKeys | undefined;
  /** Peers whose X-Forwarded-For names the client (per-IP key limits). */
  readonly trustedProxies?: BlockList | undefined;
  /** `[server] cors_origins`: pages of these origins may connect. */
  readonly corsOrigins: readonly string[];
  readonly limits: WsLimits;
  /** Where refusals are counted, by reason (read at scrape time). */
  readonly counters: GatewayCounters;
  readonly accept: AcceptUpgrade;
}

/**
 * Browsers apply no CORS to WebSockets: they send `Origin` and let the server decide. A page
 * may connect when `cors_origins` lets it call cascade over HTTP, or when it is served from
 * cascade's own host (a same-origin page behind the same reverse proxy). Clients outside a
 * browser (web3.js, viem, ethers in Node) send no Origin and are not concerned.
 */
function originAllowed(req: IncomingMessage, cors: CorsPolicy | undefined): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || cors?.allows(origin) === true) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Refuses an upgrade with a plain HTTP answer on the raw socket. */
function refuse(
  socket: Duplex,
  status: number,
  reason: string,
  message: string,
  retryAfter?: number,
): void {
  const body = JSON.stringify({ error: message });
  const retry = retryAfter === undefined ? '' : `Retry-After: ${retryAfter}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Too Many Requests',
};

/** The checks every upgrade passes before its handshake, on either listener. */
export class UpgradeGate {
  readonly #options: UpgradeGateOptions;
  readonly #wss: WebSocketServer;
  readonly #cors: CorsPolicy | undefined;
  /** Connections held per client IP, from the upgrade request until its TCP connection ends. */
  readonly #perIp = new Map<string, number>();
  #closed = false;
  /** The `upgrade` listener, one function for every listener it is added to (and removed from). */
  readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void =>
    this.#upgrade(req, socket, head);

  constructor(options: UpgradeGateOptions) {
    this.#options = options;
    this.#cors = CorsPolicy.from(options.corsOrigins);
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.limits.maxMessageBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
  }

  /** Client IPs holding a connection now (0 when every client left). */
  get ips(): number {
    return this.#perIp.size;
  }

  /** Refuses every later upgrade with 503: the gateway is shutting down. */
  close(): void {
    this.#closed = true;
  }

  #reject(
    socket: Duplex,
    reason: string,
    status: number,
    statusText: string,
    message: string,
    retryAfter?: number,
  ): void {
    const rejected = this.#options.counters.rejectedUpgrades;
    rejected.set(reason, (rejected.get(reason) ?? 0) + 1);
    refuse(socket, status, statusText, message, retryAfter);
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    if (this.#closed) {
      return this.#reject(
        socket,
        'shutting_down',
        503,
        'Service Unavailable',
        'cascade is shutting down',
      );
    }
    const { keys, chains } = this.#options;
    const hit = chains.resolve(pathOf(req.url), req.headers.host, keys?.enabled === true);
    if (hit === undefined)
      return this.#reject(
        socket,
        'path',
        404,
        'Not Found',
        `WebSocket paths are ${chains.paths.flatMap((path) => [path, `${path === '/' ? '' : path}/send-request`]).join(', ')}`,
      );
    let caller: KeyedCaller | undefined;
    if (keys?.enabled === true) {
      const who = callerOf(
        req,
        req.headers,
        keys,
        this.#options.trustedProxies,
        hit,
        hit.target.name,
      );
      if (isCallerRefusal(who)) {
        const status = who.status;
        return this.#reject(
          socket,
          'key',
          status,
          STATUS_TEXT[status] ?? 'Refused',
          who.message,
          who.retryAfterSeconds,
        );
      }
      caller = who;
    }
    const keyOrigins = caller?.key.config.origins ?? [];
    const origin = req.headers.origin;
    if (keyOrigins.length > 0 && origin !== undefined && !caller!.key.allowsOrigin(origin))
      return this.#reject(
        socket,
        'origin',
        403,
        'Forbidden',
        `pages of ${origin} may not use key '${caller!.key.name}' (keys.origins)`,
      );
    if (keyOrigins.length === 0 && !originAllowed(req, this.#cors))
      return this.#reject(
        socket,
        'origin',
        403,
        'Forbidden',
        `pages of ${req.headers.origin} may not connect: add the origin to server.cors_origins`,
      );
    // The client's address as every door reads it: behind a trusted balancer, the address its
    // X-Forwarded-For names, not the balancer's (which would put every client under one limit).
    const ip = caller?.ip ?? clientAddress(req, this.#options.trustedProxies);
    const most = this.#options.limits.connectionsPerIp;
    const held = this.#perIp.get(ip) ?? 0;
    if (held >= most) {
      return this.#reject(
        socket,
        'ip_limit',
        429,
        'Too Many Requests',
        `at most ${most} WebSocket connections per client IP (server.ws_max_connections_per_ip)`,
      );
    }
    // Counted from the upgrade request until its TCP connection ends, handshake or not.
    this.#perIp.set(ip, held + 1);
    socket.once('close', () => {
      const left = (this.#perIp.get(ip) ?? 1) - 1;
      if (left <= 0) this.#perIp.delete(ip);
      else this.#perIp.set(ip, left);
    });
    const chain = hit.target;
    const accept = this.#options.accept;
    // Read again (not on the HTTP path): the session re-checks it when the keys in force change.
    const presented =
      caller === undefined ? undefined : presentedKey(hit.key, req.url, req.headers);
    this.#wss.handleUpgrade(req, socket, head, (ws: WebSocket) =>
      accept(ws, ip, req, caller, chain, presented),
    );
  }
}
