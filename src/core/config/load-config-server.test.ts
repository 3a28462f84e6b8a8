/** loadConfig: the [server] table. */
import { describe, expect, it } from 'vitest';
import { balancerToml } from '../../../test/support/config-files.js';
import { onlyAt, paths, useConfigDir } from '../../../test/support/config-loading.js';
import { raw, type TomlFields } from '../../../test/support/toml.js';
import { DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_BODY_BYTES } from './server-section.js';

const { load, loadServer } = useConfigDir();

describe('loadConfig: [server]', () => {
  it('applies the documented defaults to a minimal [server]', () => {
    const result = loadServer({});
    expect(result.errors).toEqual([]);
    expect(result.config?.server).toEqual({
      host: '127.0.0.1',
      port: 3000,
      enableMetrics: false,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      quotasPath: 'quotas.json',
      maxBatchSize: DEFAULT_MAX_BATCH_SIZE,
      metricsPort: undefined,
      adminPort: undefined,
      quotaFlushSeconds: 60,
      requestTimeoutMs: 1000,
      attemptTimeoutMs: 500,
      wsPort: undefined,
      wsMaxConnectionsPerIp: 100,
      wsMaxSubscriptionsPerConnection: 1000,
      wsMaxMessagesPerSecond: 200,
      wsMaxBufferedBytes: 16 * 1024 * 1024,
      corsOrigins: [],
      compressionMinBytes: 1024,
      keepAliveTimeoutMs: 5000,
      trustedProxies: [],
      adminHost: '127.0.0.1',
      adminTokenEnv: 'CASCADE_ADMIN_TOKEN',
      adminToken: undefined,
      routingHeaders: false,
      requireKey: false,
      creditsRemainingHeader: false,
    });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(2 * 1024 * 1024);
  });

  it('reads every [server] key it documents', () => {
    const result = loadServer(
      {
        host: '::1',
        port: 0,
        enable_metrics: true,
        max_body_bytes: raw('4_194_304'),
        quotas_path: 'state/quotas.json',
        max_batch_size: 7,
        metrics_port: 9464,
        admin_port: 3099,
        quota_flush_seconds: 5,
        request_timeout_ms: 3000,
        attempt_timeout_ms: 1500,
        ws_port: 3001,
        ws_max_connections_per_ip: 10,
        ws_max_subscriptions_per_connection: 100,
        ws_max_messages_per_second: 50,
        ws_max_buffered_bytes: raw('1_048_576'),
        cors_origins: raw('["https://app.example", "http://127.0.0.1:5173"]'),
        compression_min_bytes: 0,
        keep_alive_timeout_ms: 65000,
        trusted_proxies: raw('["10.0.0.0/8", "2001:db8::1"]'),
        admin_host: '0.0.0.0',
        admin_token_env: 'OPS_TOKEN',
        routing_headers: true,
      },
      { OPS_TOKEN: 'secret-token' },
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.config?.server).toEqual({
      host: '::1',
      port: 0,
      enableMetrics: true,
      maxBodyBytes: 4_194_304,
      quotasPath: 'state/quotas.json',
      maxBatchSize: 7,
      metricsPort: 9464,
      adminPort: 3099,
      quotaFlushSeconds: 5,
      requestTimeoutMs: 3000,
      attemptTimeoutMs: 1500,
      wsPort: 3001,
      wsMaxConnectionsPerIp: 10,
      wsMaxSubscriptionsPerConnection: 100,
      wsMaxMessagesPerSecond: 50,
      wsMaxBufferedBytes: 1_048_576,
      corsOrigins: ['https://app.example', 'http://127.0.0.1:5173'],
      compressionMinBytes: 0,
      keepAliveTimeoutMs: 65000,
      trustedProxies: ['10.0.0.0/8', '2001:db8::1'],
      adminHost: '0.0.0.0',
      adminTokenEnv: 'OPS_TOKEN',
      adminToken: 'secret-token',
      routingHeaders: true,
      requireKey: false,
      creditsRemainingHeader: false,
    });
  });

  it.each<[string, TomlFields, string, string]>([
    ['ws_port equal to port', { port: 3000, ws_port: 3000 }, 'server.ws_port', 'is the main port'],
    [
      'fewer than 100 subscriptions per connection',
      { ws_max_subscriptions_per_connection: 99 },
      'server.ws_max_subscriptions_per_connection',
      'must be between 100 and 1000000, got 99',
    ],
    [
      'a tiny outbound buffer',
      { ws_max_buffered_bytes: 1024 },
      'server.ws_max_buffered_bytes',
      'must be between 65536',
    ],
  ])('rejects %s', (_name, server, at, message) => {
    const result = loadServer(server);
    expect(onlyAt(result.errors, at).message).toContain(message);
  });

  it.each<[string, TomlFields, string, string]>([
    ['host missing', { host: undefined }, 'server.host', 'is required'],
    [
      'attempt_timeout_ms longer than the request budget',
      { attempt_timeout_ms: 1500 },
      'server.attempt_timeout_ms',
      'attempt_timeout_ms (1500) is longer than request_timeout_ms (1000)',
    ],
    [
      'attempt_timeout_ms as long as the request budget',
      { attempt_timeout_ms: 1000 },
      'server.attempt_timeout_ms',
      'attempt_timeout_ms (1000) is as long as request_timeout_ms (1000)',
    ],
    [
      'request_timeout_ms 5',
      { request_timeout_ms: 5 },
      'server.request_timeout_ms',
      'must be between 10 and 600000, got 5',
    ],
    [
      'quota_flush_seconds 0',
      { quota_flush_seconds: 0 },
      'server.quota_flush_seconds',
      'must be between 1 and 86400, got 0',
    ],
    ['host not a string', { host: 5 }, 'server.host', 'must be a string, got number 5'],
    ['host empty', { host: ' ' }, 'server.host', 'must not be empty'],
    ['port missing', { port: undefined }, 'server.port', 'is required'],
    ['port negative', { port: -1 }, 'server.port', 'must be between 0 and 65535, got -1'],
    ['port too large', { port: 65536 }, 'server.port', 'must be between 0 and 65535, got 65536'],
    [
      'port quoted',
      { port: '3000' },
      'server.port',
      'must be a whole number, got the string "3000"',
    ],
    ['port a float', { port: 3000.5 }, 'server.port', 'got the float 3000.5'],
    [
      'enable_metrics quoted',
      { enable_metrics: 'true' },
      'server.enable_metrics',
      'must be true or false, got the string "true"',
    ],
    [
      'enable_metrics a number',
      { enable_metrics: 1 },
      'server.enable_metrics',
      'must be true or false',
    ],
    [
      'max_body_bytes below 1 KiB',
      { max_body_bytes: 1023 },
      'server.max_body_bytes',
      'must be between 1024 and 1073741824, got 1023',
    ],
    [
      'max_body_bytes above 1 GiB',
      { max_body_bytes: 1024 ** 3 + 1 },
      'server.max_body_bytes',
      'got 1073741825',
    ],
    [
      'max_body_bytes as text',
      { max_body_bytes: '2MiB' },
      'server.max_body_bytes',
      'must be a whole number',
    ],
    ['quotas_path a number', { quotas_path: 5 }, 'server.quotas_path', 'must be a string'],
    ['quotas_path empty', { quotas_path: '' }, 'server.quotas_path', 'must not be empty'],
    [
      'max_batch_size 0',
      { max_batch_size: 0 },
      'server.max_batch_size',
      'must be between 1 and 100000, got 0',
    ],
    ['max_batch_size quoted', { max_batch_size: '10' }, 'server.max_batch_size', 'whole number'],
    [
      'metrics_port out of range',
      { metrics_port: 70000 },
      'server.metrics_port',
      'must be between 0 and 65535, got 70000',
    ],
    ['metrics_port quoted', { metrics_port: '9464' }, 'server.metrics_port', 'whole number'],
    [
      'admin_port negative',
      { admin_port: -5 },
      'server.admin_port',
      'must be between 0 and 65535, got -5',
    ],
    ['admin_port a float', { admin_port: 3099.1 }, 'server.admin_port', 'got the float 3099.1'],
    [
      'an admin listener on every interface without a token',
      { admin_port: 3099, admin_host: '0.0.0.0' },
      'server.admin_host',
      'the admin listener on 0.0.0.0 would be reachable from other machines, and CASCADE_ADMIN_TOKEN is not set',
    ],
    [
      'a token variable that is no name',
      { admin_token_env: 'hunter2 secret' },
      'server.admin_token_env',
      'is not an environment variable name',
    ],
    [
      'routing_headers quoted',
      { routing_headers: 'true' },
      'server.routing_headers',
      'true or false',
    ],
  ])('rejects %s', (_case, server, at, message) => {
    const result = loadServer(server);
    expect(result.config).toBeUndefined();
    expect(onlyAt(result.errors, at).message).toContain(message);
  });

  it('binds the admin listener elsewhere once its token variable is set', () => {
    const server = { admin_port: 3099, admin_host: '0.0.0.0', admin_token_env: 'OPS_TOKEN' };
    expect(loadServer(server).errors.map((e) => e.message)).toEqual([
      'the admin listener on 0.0.0.0 would be reachable from other machines, and OPS_TOKEN is not set',
    ]);
    expect(loadServer(server, { OPS_TOKEN: 't0ken' }).config?.server.adminToken).toBe('t0ken');
  });

  it('never coerces a wrong type to the default', () => {
    const result = loadServer({ enable_metrics: 'false', max_batch_size: '100' });
    expect(result.config).toBeUndefined();
    expect(paths(result.errors).sort()).toEqual(['server.enable_metrics', 'server.max_batch_size']);
  });

  it('rejects an unknown [server] key with a did-you-mean hint', () => {
    const result = loadServer({ enable_metric: true });
    const problem = onlyAt(result.errors, 'server.enable_metric');
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toBe("did you mean 'enable_metrics'?");
  });

  it('says keys_file written under [server] belongs at the top of the file', () => {
    const problem = onlyAt(loadServer({ keys_file: 'keys.toml' }).errors, 'server.keys_file');
    expect(problem.hint).toContain('keys_file belongs at the top level');
    expect(problem.hint).toContain('move it above the first [table] header');
  });

  it('lists the allowed keys when an unknown key resembles none', () => {
    const problem = onlyAt(loadServer({ zzzzzzzz: 1 }).errors, 'server.zzzzzzzz');
    expect(problem.hint).toContain('allowed keys: host, port, enable_metrics');
  });

  it('reports a missing [server] table', () => {
    const problem = onlyAt(load({ server: null }).errors, 'server');
    expect(problem.message).toBe('the [server] table is missing');
  });

  it('reports a [server] that is not a table', () => {
    const text = `server = 5\n${balancerToml({ server: null })}`;
    expect(onlyAt(load(text).errors, 'server').message).toBe('must be a table, got number 5');
  });
});
