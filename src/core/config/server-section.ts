import { CHAIN_KEYS, readChainFields } from './chain-fields.js';
import { isIPv4 } from 'node:net';
import { ADMIN_KEYS, readAdminFields } from './admin-fields.js';
import { readOriginList } from './origin-list.js';
import type { ProblemList } from './problem-list.js';
import { readProxyRanges } from './proxy-ranges.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';
import type { ServerConfig } from './types.js';

/** Default request-body cap: 2 MiB, as CascadeRPC. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Whole-request budget: CascadeRPC's 1 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 1000;
/** Per-attempt deadline: half the budget, so a stalled node leaves time for another. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 500;
/** Default seconds between quotas.json writes (CascadeRPC's flush period). */
export const DEFAULT_QUOTA_FLUSH_SECONDS = 60;
/** Default number of elements one JSON-RPC batch may carry. */
export const DEFAULT_MAX_BATCH_SIZE = 100;
/** Answers this big or bigger are gzipped for clients that ask (what CDNs and providers use). */
export const DEFAULT_COMPRESSION_MIN_BYTES = 1024;
/** Answers over 64 KiB are streamed as they arrive, so a larger threshold could not apply. */
export const MAX_COMPRESSION_MIN_BYTES = 64 * 1024;
/** Idle client connections close after this long: Node's own default, kept. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5000;

const SERVER_KEYS = [
  'host',
  'port',
  'enable_metrics',
  'max_body_bytes',
  'quotas_path',
  'max_batch_size',
  'metrics_port',
  'admin_port',
  'quota_flush_seconds',
  'request_timeout_ms',
  'attempt_timeout_ms',
  'ws_port',
  'ws_max_connections_per_ip',
  'ws_max_subscriptions_per_connection',
  'ws_max_messages_per_second',
  'ws_max_buffered_bytes',
  'cors_origins',
  'compression_min_bytes',
  'keep_alive_timeout_ms',
  'trusted_proxies',
  'require_key',
  'credits_remaining_header',
  ...ADMIN_KEYS,
  ...CHAIN_KEYS,
] as const;

/** WebSocket connections per client IP when `ws_max_connections_per_ip` is not set. */
export const DEFAULT_WS_CONNECTIONS_PER_IP = 100;
/** Subscriptions per client connection by default (web3.js apps open dozens). */
export const DEFAULT_WS_SUBSCRIPTIONS_PER_CONNECTION = 1000;
/** Fewest subscriptions per connection a config may allow: real apps need that many. */
export const MIN_WS_SUBSCRIPTIONS_PER_CONNECTION = 100;
/** Messages per second per client connection by default. */
export const DEFAULT_WS_MESSAGES_PER_SECOND = 200;
/** Bytes queued for one slow client before it is closed (1008), by default. */
export const DEFAULT_WS_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** The TOML name of a `[server]` field (for messages about changed keys). */
export function serverKeyOf(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

const PORT_HINT = 'a TCP port from 0 to 65535 (0 picks a free one)';

/** Validates `[server]`; returns undefined when it has errors. */
export function readServerSection(
  doc: Table,
  file: string,
  problems: ProblemList,
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig | undefined {
  const section = doc.server;
  if (section === undefined) {
    problems.error(
      file,
      'server',
      'the [server] table is missing',
      'add [server] with host and port',
    );
    return undefined;
  }
  if (!isTable(section)) {
    problems.error(
      file,
      'server',
      `must be a table, got ${describeType(section)}`,
      'write [server]',
    );
    return undefined;
  }
  const before = problems.errors.length;
  const r = new FieldReader(section, file, 'server', problems);
  const host = r.string('host', true, 'e.g. host = "127.0.0.1" (or "0.0.0.0" for every interface)');
  const port = r.integer('port', { min: 0, max: 65535, required: true, hint: PORT_HINT });
  const enableMetrics = r.boolean('enable_metrics', false);
  const requireKey = r.boolean('require_key', false);
  const creditsRemainingHeader = r.boolean('credits_remaining_header', false);
  const maxBodyBytes = r.integer('max_body_bytes', {
    min: 1024,
    max: 1024 * 1024 * 1024,
    required: false,
    hint: 'bytes, from 1024 to 1 GiB; the default is 2 MiB',
  });
  const quotasPath = r.string('quotas_path', false, 'a file path, e.g. "quotas.json"');
  const maxBatchSize = r.integer('max_batch_size', {
    min: 1,
    max: 100_000,
    required: false,
    hint: 'elements per JSON-RPC batch; the default is 100',
  });
  const metricsPort = r.integer('metrics_port', {
    min: 0,
    max: 65535,
    required: false,
    hint: PORT_HINT,
  });
  const adminPort = r.integer('admin_port', {
    min: 0,
    max: 65535,
    required: false,
    hint: PORT_HINT,
  });
  const quotaFlushSeconds = r.integer('quota_flush_seconds', {
    min: 1,
    max: 86_400,
    required: false,
    hint: 'seconds between quotas.json writes; a crash loses at most this much usage (default 60)',
  });
  const requestTimeoutMs = r.integer('request_timeout_ms', {
    min: 10,
    max: 600_000,
    required: false,
    hint: 'the whole-request budget in ms, retries and waits included (default 1000)',
  });
  const attemptTimeoutMs = r.integer('attempt_timeout_ms', {
    min: 10,
    max: 600_000,
    required: false,
    hint: 'the deadline of one upstream attempt in ms, connect and TLS included (default 500)',
  });
  const ws = readWsLimits(r);
  const compressionMinBytes = r.integer('compression_min_bytes', {
    min: 0,
    max: MAX_COMPRESSION_MIN_BYTES,
    required: false,
    hint: `bytes; answers this big are gzipped for clients that accept gzip, 0 turns it off (default ${DEFAULT_COMPRESSION_MIN_BYTES}; answers over 64 KiB are streamed and always qualify)`,
  });
  const keepAliveTimeoutMs = r.integer('keep_alive_timeout_ms', {
    min: 1000,
    max: 3_600_000,
    required: false,
    hint: `ms an idle client connection stays open; behind a load balancer, longer than its idle timeout (AWS ALB 60 s: 65000) (default ${DEFAULT_KEEP_ALIVE_TIMEOUT_MS})`,
  });
  r.accept('cors_origins');
  const corsOrigins = readOriginList(section.cors_origins, file, problems);
  r.accept('trusted_proxies');
  const trustedProxies = readProxyRanges(section.trusted_proxies, file, problems);
  const admin = readAdminFields(r, env, file, problems);
  const chain = readChainFields(r, file, problems);
  r.rejectUnknown(SERVER_KEYS);
  if (ws.wsPort !== undefined && ws.wsPort !== 0 && ws.wsPort === port) {
    problems.error(
      file,
      'server.ws_port',
      `ws_port ${ws.wsPort} is the main port; the main port takes WebSocket upgrades already`,
      'use port + 1 (where @solana/web3.js looks for it), or remove ws_port',
    );
  }
  const budget = requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const attempt = attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  if (attempt >= budget) {
    // An attempt as long as the whole budget always ends with the request: the node that
    // hung would never be penalized and would be dialed first again and again.
    problems.error(
      file,
      attemptTimeoutMs === undefined ? 'server.request_timeout_ms' : 'server.attempt_timeout_ms',
      `attempt_timeout_ms (${attempt}) is ${attempt === budget ? 'as long as' : 'longer than'} request_timeout_ms (${budget}), so an attempt could never time out on its own`,
      'keep attempt_timeout_ms below request_timeout_ms (half of it leaves room for one retry)',
    );
  }
  if (host !== undefined && host.trim() === '') {
    problems.error(file, 'server.host', 'must not be empty', 'e.g. host = "127.0.0.1"');
  }
  if (quotasPath !== undefined && quotasPath.trim() === '') {
    problems.error(
      file,
      'server.quotas_path',
      'must not be empty',
      'omit it for quotas.json in the working directory',
    );
  }
  if (adminPort !== undefined && admin.adminToken === undefined && !isLoopback(admin.adminHost)) {
    problems.error(
      file,
      'server.admin_host',
      `the admin listener on ${admin.adminHost} would be reachable from other machines, and ${admin.adminTokenEnv} is not set`,
      `set ${admin.adminTokenEnv} to a long random token (clients send "Authorization: Bearer <token>"), or omit admin_host for 127.0.0.1`,
    );
  }
  if (
    problems.errors.length > before ||
    host === undefined ||
    port === undefined ||
    corsOrigins === undefined ||
    trustedProxies === undefined
  )
    return undefined;
  if (enableMetrics && metricsPort === undefined && !isLoopback(host)) {
    problems.warn(
      file,
      'server.enable_metrics',
      `/metrics is served on ${host}, which is reachable from other machines`,
      'set server.metrics_port to serve /metrics on 127.0.0.1 only, or keep the port behind a firewall',
    );
  }
  return {
    host,
    port,
    enableMetrics,
    maxBodyBytes: maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    quotasPath: quotasPath ?? 'quotas.json',
    maxBatchSize: maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE,
    metricsPort,
    adminPort,
    quotaFlushSeconds: quotaFlushSeconds ?? DEFAULT_QUOTA_FLUSH_SECONDS,
    requestTimeoutMs: budget,
    attemptTimeoutMs: attempt,
    corsOrigins,
    compressionMinBytes: compressionMinBytes ?? DEFAULT_COMPRESSION_MIN_BYTES,
    keepAliveTimeoutMs: keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    trustedProxies,
    requireKey,
    creditsRemainingHeader,
    ...ws,
    ...admin,
    ...(chain === undefined ? {} : { chain }),
  };
}

/** The `ws_*` keys of `[server]`, defaults applied. */
function readWsLimits(r: FieldReader) {
  const wsPort = r.integer('ws_port', { min: 0, max: 65535, required: false, hint: PORT_HINT });
  const perIp = r.integer('ws_max_connections_per_ip', {
    min: 1,
    max: 1_000_000,
    required: false,
    hint: `WebSocket connections one client IP may hold; more get 429 (default ${DEFAULT_WS_CONNECTIONS_PER_IP})`,
  });
  const subscriptions = r.integer('ws_max_subscriptions_per_connection', {
    min: MIN_WS_SUBSCRIPTIONS_PER_CONNECTION,
    max: 1_000_000,
    required: false,
    hint: `at least ${MIN_WS_SUBSCRIPTIONS_PER_CONNECTION}: real apps open dozens (default ${DEFAULT_WS_SUBSCRIPTIONS_PER_CONNECTION})`,
  });
  const messages = r.integer('ws_max_messages_per_second', {
    min: 1,
    max: 1_000_000,
    required: false,
    hint: `messages one WebSocket client may send per second (default ${DEFAULT_WS_MESSAGES_PER_SECOND})`,
  });
  const buffered = r.integer('ws_max_buffered_bytes', {
    min: 64 * 1024,
    max: 1024 * 1024 * 1024,
    required: false,
    hint: 'bytes queued for a slow WebSocket client before it is closed, from 64 KiB to 1 GiB (default 16 MiB)',
  });
  return {
    wsPort,
    wsMaxConnectionsPerIp: perIp ?? DEFAULT_WS_CONNECTIONS_PER_IP,
    wsMaxSubscriptionsPerConnection: subscriptions ?? DEFAULT_WS_SUBSCRIPTIONS_PER_CONNECTION,
    wsMaxMessagesPerSecond: messages ?? DEFAULT_WS_MESSAGES_PER_SECOND,
    wsMaxBufferedBytes: buffered ?? DEFAULT_WS_MAX_BUFFERED_BYTES,
  };
}

/** True for addresses only this machine can reach (`[::1]` as URL.hostname writes it, too). */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare === 'localhost' || bare === '::1' || (isIPv4(bare) && bare.startsWith('127.'));
}
