/**
 * One client WebSocket. Each message is a JSON-RPC call: keep-alives are answered or swallowed
 * here (web3.js and kit send `{"jsonrpc":"2.0","method":"ping"}` with no id, viem `net_version`
 * with `id: null`) — never forwarded, never billed; subscribe and unsubscribe calls go to the
 * hub; anything else is served exactly like a POST (core/serving: the cache, coalescing, then
 * routing) and its answer comes back on the socket with the client's id. Limits: messages per
 * second (over it: an error answer), the subscriptions one connection may hold (over it: an
 * error answer), and the bytes queued for a client that does not read (over it: closed with
 * 1008).
 */
import type { WebSocket } from 'ws';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { TokenBucket } from '../node/token-bucket.js';
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../protocol/error-body.js';
import { memberValueSpan, trimmedSpan } from '../protocol/json-spans.js';
import {
  isNotification,
  parseRequest,
  readIdJson,
  type BatchElement,
  type RpcRequest,
} from '../protocol/rpc-request.js';
import { INTERNAL_ERROR, batchAnswerOf } from '../routing/route-answer.js';
import {
  LIMIT_EXCEEDED,
  SUBSCRIBE_IN_BATCH,
  batchRefusalJson,
  batchTooLarge,
  parseRefusal,
  refusalJson,
  tooManyMessages,
  type Refusal,
} from '../serving/refusal.js';
import { recordRequest } from '../serving/request-record.js';
import { serveBatch } from '../serving/serve-batch.js';
import { admitSubscription, type KeyedCaller } from '../serving/key-gate.js';
import { isRefusal, type ClientKeys } from '../keys/client-keys.js';
import { UNKNOWN_KEY, chainRefusal, originRefused, type KeyRefusal } from '../keys/key-refusal.js';
import { servedResult } from '../serving/serve-request.js';
import { CanonicalJsonError, canonicalJson } from './canonical-json.js';
import type { SharedSubscription, Subscriber } from './shared-subscription.js';
import { subscribeMethodOf, unsubscribeFamilyOf } from './subscription-methods.js';
import { answerOf } from './routed-answer.js';
import type { GatewayContext } from './gateway-context.js';

/** Policy violation (RFC 6455 §7.4.1): the client reads too slowly. */
export const CLOSE_POLICY_VIOLATION = 1008;
const TEXT_FRAME = { binary: false } as const;

/** The close frame's reason when a session's key stopped passing (at most 123 bytes). */
function closeReasonOf(refusal: KeyRefusal): string {
  if (refusal.reason === 'revoked') return 'client key revoked';
  if (refusal.reason === 'chain') return 'client key no longer valid on this chain';
  if (refusal.reason === 'origin') return 'client key no longer valid for this origin';
  return 'client key no longer valid';
}

/** A connected client. */
export class ClientSession implements Subscriber {
  readonly subscriptions = new Map<string, SharedSubscription>();
  pendingSubscribes = 0;
  readonly #bucket: TokenBucket;
  #closed = false;
  /** Set when the key this session passed with no longer does (it is closing). */
  #keyRefused: { readonly refusal: KeyRefusal; readonly keys: ClientKeys } | undefined;

  constructor(
    readonly socket: WebSocket,
    readonly ip: string,
    readonly headers: ForwardHeaders,
    readonly ctx: GatewayContext,
    /** The client key the upgrade presented (undefined: keyless, or keys are off). */
    readonly caller?: KeyedCaller,
    /** The secret the upgrade presented (checked again when the keys in force change). */
    readonly presented?: string,
  ) {
    this.#bucket = new TokenBucket(ctx.limits.messagesPerSecond, ctx.route.clock.now());
    // Text and binary frames alike carry JSON text.
    socket.on('message', (data: Buffer) => this.#onMessage(data));
    socket.on('error', () => undefined);
  }

  /** Sends one message unless the client is gone or too slow (then it is closed with 1008). */
  send(data: Buffer | string): boolean {
    const socket = this.socket;
    if (this.#closed || socket.readyState !== socket.OPEN) return false;
    if (socket.bufferedAmount > this.ctx.limits.maxBufferedBytes) {
      this.ctx.counters.slowClientCloses++;
      this.close(CLOSE_POLICY_VIOLATION, 'client too slow: outbound buffer over the limit');
      return false;
    }
    // Text frames, as nodes send: browser-style clients (kit, viem) read binary ones as blobs.
    socket.send(data, TEXT_FRAME);
    return true;
  }

  /** Closes the socket with `code` (the close handshake, then the TCP connection). */
  close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.close(code, reason);
    // A client that never answers the close frame is cut off.
    setTimeout(() => this.socket.terminate(), 2000).unref();
  }

  #error(code: number, message: string, idJson: string): void {
    this.send(errorJson(code, message, idJson));
  }

  /** Answers a request cascade will not route (serving/refusal.ts) and records it, as HTTP does. */
  #refuse(refused: Refusal, idJson: string, startedAt: number): void {
    this.send(refusalJson(refused, idJson));
    recordRequest(this.ctx, refused.outcome, startedAt);
  }

  /**
   * The keys in force changed (reload, rotation, removal, revoke): a session admitted with a key
   * checks its secret again, on `chain`, from its page's origin (the key's `origins` may have
   * changed). One that no longer passes ends its subscriptions and is
   * closed with 1008 naming why; one that still passes is left alone.
   */
  recheckKey(keys: ClientKeys, chain: string): void {
    const caller = this.caller;
    if (caller === undefined || this.#closed) return;
    const now = keys.recheck(this.presented);
    // The secret names another key now (a reload moved it): not the key this session was let in as.
    const refusal = isRefusal(now)
      ? now
      : now !== caller.key
        ? UNKNOWN_KEY
        : (chainRefusal(now, chain) ??
          (now.allowsOrigin(caller.origin) ? undefined : originRefused(now.name, caller.origin!)));
    if (refusal === undefined) return;
    this.#keyRefused = { refusal, keys };
    // The upstream lets go now, not after the client's close handshake.
    this.ctx.hub.detachAll(this);
    this.close(CLOSE_POLICY_VIOLATION, closeReasonOf(refusal));
  }

  #onMessage(data: Buffer): void {
    const now = this.ctx.route.clock.now();
    const parsed = parseRequest(data, this.ctx.registry);
    if (!parsed.ok) return this.#refuse(parseRefusal(parsed.problem), parsed.idJson, now);
    const request = parsed.request;
    const refused = this.#keyRefused;
    if (refused !== undefined) {
      // A call that slipped in before the client read the close: refused as HTTP refuses it.
      refused.keys.countUnkeyed(refused.refusal.reason);
      return this.#refuse(refused.refusal, request.batch ? 'null' : readIdJson(request), now);
    }
    if (this.#isKeepAlive(request)) return;
    if (this.#bucket.tryTake(now) > 0) {
      const refused = tooManyMessages(this.ctx.limits.messagesPerSecond);
      return this.#refuse(refused, request.batch ? 'null' : readIdJson(request), now);
    }
    if (request.batch !== undefined) return void this.#batch(request.batch, now);
    const subscribe = subscribeMethodOf(request.method, undefined);
    if (subscribe !== undefined || unsubscribeFamilyOf(request.method) !== undefined) {
      return this.#subscription(request);
    }
    void this.#route(request);
  }

  /**
   * web3.js/kit's JSON `ping` and viem's `net_version` with id null, each sent as a message of
   * its own: handled here. A batch is never a keep-alive (its elements are served as an HTTP
   * batch's are, whatever its first one is).
   */
  #isKeepAlive(request: RpcRequest): boolean {
    if (request.batch !== undefined) return false;
    if (request.method === 'ping') {
      if (!isNotification(request))
        this.send(`{"jsonrpc":"2.0","result":"pong","id":${readIdJson(request)}}`);
      return true;
    }
    return request.method === 'net_version' && readIdJson(request) === 'null';
  }

  /** A plain request: served as an HTTP one is (cache, coalescing, routing), answered here. */
  async #route(request: RpcRequest): Promise<void> {
    const ctx = this.ctx;
    const startedAt = ctx.route.clock.now();
    const idJson = readIdJson(request);
    let outcome = INTERNAL_ERROR.outcome;
    try {
      const result = await servedResult(request, this.headers, ctx, this.caller);
      if (result.kind === 'failed') throw result.error;
      const answer = await answerOf(result, idJson);
      outcome = answer.outcome;
      if (!isNotification(request) && answer.body.length > 0) this.send(answer.body);
    } catch (err) {
      ctx.logger.error({ err }, 'WebSocket request failed unexpectedly');
      this.#error(INTERNAL_ERROR.code, INTERNAL_ERROR.message, idJson);
    }
    recordRequest(ctx, outcome, startedAt);
  }

  /** A batch: served element by element as an HTTP batch is, answered as one array. */
  async #batch(batch: readonly BatchElement[], startedAt: number): Promise<void> {
    const ctx = this.ctx;
    // Sized before any refusal, as an HTTP batch is.
    ctx.route.metrics.batchSize(batch.length);
    if (batch.length > ctx.maxBatchSize) {
      return this.#refuse(batchTooLarge(batch.length, ctx.maxBatchSize), 'null', startedAt);
    }
    const named = (element: BatchElement) =>
      element.method !== undefined &&
      (subscribeMethodOf(element.method, undefined) !== undefined ||
        unsubscribeFamilyOf(element.method) !== undefined);
    if (batch.some(named)) {
      // Refused as a batch: one error per element under its own id, which the client matches.
      this.send(
        batchRefusalJson(
          SUBSCRIBE_IN_BATCH,
          batch.map((element) => element.idJson),
        ),
      );
      recordRequest(ctx, SUBSCRIBE_IN_BATCH.outcome, startedAt);
      return;
    }
    let outcome = INTERNAL_ERROR.outcome;
    try {
      const served = await serveBatch(batch, this.headers, ctx, this.caller);
      const refused = served.refused;
      if (refused !== undefined && served.refusedWhole === true) {
        ctx.route.metrics.request(refused.outcome, (ctx.route.clock.now() - startedAt) / 1000);
        ctx.route.chainMetrics?.request(refused.outcome);
        return this.#error(refused.code, refused.message, 'null');
      }
      const answer = batchAnswerOf(served, batch);
      outcome = refused?.outcome ?? answer.outcome;
      // Only notifications: nothing is owed, so no message (HTTP's 204).
      if (answer.status !== 204) this.send(answer.body);
    } catch (err) {
      ctx.logger.error({ err }, 'WebSocket batch failed unexpectedly');
      this.#error(INTERNAL_ERROR.code, INTERNAL_ERROR.message, 'null');
    }
    recordRequest(ctx, outcome, startedAt);
  }

  /** A subscribe or unsubscribe call: params read once, canonically, then the hub. */
  #subscription(request: RpcRequest): void {
    const body = request.body;
    const idJson = readIdJson(request);
    let params: unknown;
    let paramsJson = '[]';
    try {
      const span = memberValueSpan(body, trimmedSpan(body), 'params');
      const text = span
        ? body.toString('utf8', span.start, span.end)
        : JSON.stringify((JSON.parse(body.toString('utf8')) as { params?: unknown }).params ?? []);
      paramsJson = canonicalJson(text);
      params = JSON.parse(paramsJson);
    } catch (err) {
      if (!(err instanceof CanonicalJsonError) && !(err instanceof SyntaxError)) throw err;
      return this.#error(RPC_ERROR.parseError, ERROR_MESSAGE.parseError, idJson);
    }
    if (!Array.isArray(params))
      return this.#error(-32602, 'Invalid params: expected an array', idJson);
    const family = unsubscribeFamilyOf(request.method);
    if (family !== undefined) {
      this.send(this.ctx.hub.unsubscribe(this, family, params[0], idJson));
      return;
    }
    const spec = subscribeMethodOf(request.method, params[0]);
    if (spec === undefined) return;
    if (spec === 'unknown_kind') {
      return this.#error(-32601, `no "${String(params[0])}" subscription in eth namespace`, idJson);
    }
    const caller = this.caller;
    if (caller !== undefined) {
      const refusal = admitSubscription(caller, request.method, request.methodId, params, this.ctx);
      if (refusal !== undefined) return this.#error(refusal.code, refusal.message, idJson);
    }
    const most = this.ctx.limits.subscriptionsPerConnection;
    const keyMost = caller?.key.config.maxSubscriptions;
    if (
      keyMost !== undefined &&
      keyMost < most &&
      this.subscriptions.size + this.pendingSubscribes >= keyMost
    ) {
      return this.#error(
        LIMIT_EXCEEDED,
        `Subscription limit reached: key '${caller!.key.name}' holds at most ${keyMost} per connection (keys.max_subscriptions)`,
        idJson,
      );
    }
    if (this.subscriptions.size + this.pendingSubscribes >= most) {
      return this.#error(
        LIMIT_EXCEEDED,
        `Subscription limit reached: at most ${most} per connection (server.ws_max_subscriptions_per_connection)`,
        idJson,
      );
    }
    this.ctx.hub.subscribe(this, spec, paramsJson, params, idJson);
  }

  /** The socket closed (either side): every subscription lets the client go. */
  disposed(): void {
    this.#closed = true;
    this.ctx.hub.detachAll(this);
  }
}
