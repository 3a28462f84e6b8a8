import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  balancerToml,
  nodeFields,
  priceListToml,
  type BalancerConfigSpec,
} from '../../../test/helpers/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/helpers/temp-dir.js';
import { raw, type TomlFields } from '../../../test/helpers/toml.js';
import { DEFAULT_CONFIG_PATH, loadConfig, loadDotEnv, resolveConfigPath } from './load-config.js';
import { DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_BODY_BYTES } from './server-section.js';
import type { ConfigProblem, LoadResult } from './types.js';

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-config-');
});
afterEach(() => temp.cleanup());

interface LoadOptions {
  readonly prices?: Readonly<Record<string, string>>;
  readonly env?: NodeJS.ProcessEnv;
}

/** Writes `config.toml` (+ `prices/basic.toml`) into the temp dir and loads it. */
function load(config: BalancerConfigSpec | string, options: LoadOptions = {}): LoadResult {
  temp.write({
    'config.toml': typeof config === 'string' ? config : balancerToml(config),
    'prices/basic.toml': priceListToml(),
    ...options.prices,
  });
  return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: options.env ?? {} });
}

function loadServer(server: TomlFields, env: NodeJS.ProcessEnv = {}): LoadResult {
  return load({ server }, { env });
}

function loadNode(overrides: TomlFields, env: NodeJS.ProcessEnv = {}): LoadResult {
  return load({ nodes: [nodeFields('node-a', overrides)] }, { env });
}

function paths(problems: readonly ConfigProblem[]): string[] {
  return problems.map((problem) => problem.path);
}

/** The one problem at `at`; fails when there is none or several. */
function onlyAt(problems: readonly ConfigProblem[], at: string): ConfigProblem {
  const found = problems.filter((problem) => problem.path === at);
  expect(found, `problems at ${at}: ${JSON.stringify(problems)}`).toHaveLength(1);
  return found[0]!;
}

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

describe('loadConfig: [[nodes]] fields', () => {
  it('loads a valid node with its values', () => {
    const result = loadNode({ reset_day: 15, tier: 2 });
    expect(result.errors).toEqual([]);
    const node = result.config!.nodes[0]!;
    expect(node).toMatchObject({
      name: 'node-a',
      url: 'http://127.0.0.1:8891',
      redactedUrl: 'http://127.0.0.1:8891/',
      tier: 2,
      rpsLimit: 100,
      maxConcurrent: 10,
      monthlyLimit: 1000,
      spilloverThreshold: 950,
      resetDay: 15,
    });
    expect(node.pricing.path).toBe(path.join(temp.dir, 'prices/basic.toml'));
    expect(node.pricing.configuredPath).toBe('prices/basic.toml');
  });

  it('treats an omitted rps_limit and max_concurrent as no limit (Infinity)', () => {
    const node = loadNode({ rps_limit: undefined, max_concurrent: undefined }).config!.nodes[0]!;
    expect(node.rpsLimit).toBe(Infinity);
    expect(node.maxConcurrent).toBe(Infinity);
  });

  it('defaults reset_day to 1 and accepts 1 and 31', () => {
    expect(loadNode({}).config!.nodes[0]!.resetDay).toBe(1);
    expect(loadNode({ reset_day: 1 }).config!.nodes[0]!.resetDay).toBe(1);
    expect(loadNode({ reset_day: 31 }).config!.nodes[0]!.resetDay).toBe(31);
  });

  it('accepts TOML digit separators such as 50_000_000', () => {
    const node = loadNode({ monthly_limit: raw('50_000_000'), rps_limit: raw('1_000') }).config!
      .nodes[0]!;
    expect(node.monthlyLimit).toBe(50_000_000);
    expect(node.rpsLimit).toBe(1000);
  });

  it('accepts tier 0 and 255 and max_concurrent 0', () => {
    expect(loadNode({ tier: 255 }).config!.nodes[0]!.tier).toBe(255);
    expect(loadNode({ tier: 0 }).config!.nodes[0]!.tier).toBe(0);
    expect(loadNode({ max_concurrent: 0 }).config!.nodes[0]!.maxConcurrent).toBe(0);
  });

  it.each<[string, TomlFields, string, string]>([
    ['name missing', { name: undefined }, 'nodes[0].name', 'is required'],
    ['name not a string', { name: 7 }, 'nodes[0].name', 'must be a string, got number 7'],
    ['name empty', { name: '' }, 'nodes[0].name', 'must not be empty'],
    ['url missing', { url: undefined }, 'nodes[0].url', 'is required'],
    ['url not a string', { url: 8899 }, 'nodes[0].url', 'must be a string'],
    [
      'a scheme-less url',
      { url: '127.0.0.1:8899' },
      'nodes[0].url',
      "invalid URL for node 'node-a'",
    ],
    [
      'a url that is not a URL',
      { url: 'not a url' },
      'nodes[0].url',
      "invalid URL for node 'node-a'",
    ],
    ['an empty url', { url: '' }, 'nodes[0].url', "invalid URL for node 'node-a'"],
    [
      'an ftp url',
      { url: 'ftp://127.0.0.1/rpc' },
      'nodes[0].url',
      "unsupported scheme 'ftp:' for node 'node-a'",
    ],
    [
      'a websocket url',
      { url: 'wss://rpc.example.com' },
      'nodes[0].url',
      "unsupported scheme 'wss:' for node 'node-a'",
    ],
    ['tier missing', { tier: undefined }, 'nodes[0].tier', 'is required'],
    ['tier negative', { tier: -1 }, 'nodes[0].tier', 'must be between 0 and 255, got -1'],
    ['tier 256', { tier: 256 }, 'nodes[0].tier', 'must be between 0 and 255, got 256'],
    ['tier quoted', { tier: '0' }, 'nodes[0].tier', 'must be a whole number, got the string "0"'],
    ['tier a float', { tier: 1.5 }, 'nodes[0].tier', 'got the float 1.5'],
    ['rps_limit 0', { rps_limit: 0 }, 'nodes[0].rps_limit', "RPS for node 'node-a' cannot be 0"],
    ['rps_limit negative', { rps_limit: -1 }, 'nodes[0].rps_limit', 'got -1'],
    ['rps_limit quoted', { rps_limit: '100' }, 'nodes[0].rps_limit', 'got the string "100"'],
    ['rps_limit quoted zero', { rps_limit: '0' }, 'nodes[0].rps_limit', 'got the string "0"'],
    ['rps_limit a float', { rps_limit: 0.5 }, 'nodes[0].rps_limit', 'got the float 0.5'],
    [
      'rps_limit above u32',
      { rps_limit: 2 ** 32 },
      'nodes[0].rps_limit',
      'must be between 1 and 4294967295',
    ],
    ['max_concurrent negative', { max_concurrent: -1 }, 'nodes[0].max_concurrent', 'got -1'],
    ['max_concurrent a boolean', { max_concurrent: true }, 'nodes[0].max_concurrent', 'whole'],
    ['monthly_limit missing', { monthly_limit: undefined }, 'nodes[0].monthly_limit', 'required'],
    ['monthly_limit negative', { monthly_limit: -1 }, 'nodes[0].monthly_limit', 'got -1'],
    [
      'monthly_limit quoted',
      { monthly_limit: '1000' },
      'nodes[0].monthly_limit',
      'got the string "1000"',
    ],
    [
      'reset_day 0',
      { reset_day: 0 },
      'nodes[0].reset_day',
      "reset_day for node 'node-a' must be 1..=31, got 0",
    ],
    [
      'reset_day 32',
      { reset_day: 32 },
      'nodes[0].reset_day',
      "reset_day for node 'node-a' must be 1..=31, got 32",
    ],
    ['reset_day quoted', { reset_day: '15' }, 'nodes[0].reset_day', 'got the string "15"'],
    [
      'provider_pricing_path missing',
      { provider_pricing_path: undefined },
      'nodes[0].provider_pricing_path',
      'is required',
    ],
    [
      'provider_pricing_path not a string',
      { provider_pricing_path: 5 },
      'nodes[0].provider_pricing_path',
      'must be a string',
    ],
  ])('rejects %s', (_case, overrides, at, message) => {
    const result = loadNode(overrides);
    expect(result.config).toBeUndefined();
    expect(onlyAt(result.errors, at).message).toContain(message);
  });

  it('says how to express "no limit" when rps_limit is 0', () => {
    const problem = onlyAt(loadNode({ rps_limit: 0 }).errors, 'nodes[0].rps_limit');
    expect(problem.hint).toContain('omit the key for no limit');
  });

  it('names a node without a name by its index', () => {
    const result = loadNode({ name: undefined, rps_limit: 0 });
    expect(onlyAt(result.errors, 'nodes[0].rps_limit').message).toBe(
      "RPS for node '#0' cannot be 0",
    );
  });

  it.each<[string, string, string]>([
    ['rps_limt', 'rps_limit', 'rps_limt'],
    ['max_concurent', 'max_concurrent', 'max_concurent'],
    ['provider_pricing', 'provider_pricing_path', 'provider_pricing'],
    ['Name', 'name', 'Name'],
  ])('rejects the unknown node key %s with "did you mean %s"', (key, suggestion) => {
    const result = loadNode({ [key]: 1 });
    const problem = onlyAt(result.errors, `nodes[0].${key}`);
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toBe(`did you mean '${suggestion}'?`);
  });

  it("rejects CascadeRPC's old billing_type key instead of ignoring it", () => {
    const problem = onlyAt(loadNode({ billing_type: 'credits' }).errors, 'nodes[0].billing_type');
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toContain('allowed keys: name, url');
  });

  it('rejects a table nested under a node', () => {
    const text = balancerToml({ extra: '[nodes.limits]\nrps = 1\n' });
    expect(onlyAt(load(text).errors, 'nodes[0].limits').message).toBe('unknown key');
  });
});

describe('loadConfig: the node list', () => {
  it('rejects two nodes with the same name, naming it', () => {
    const result = load({ nodes: [nodeFields('x'), nodeFields('y'), nodeFields('x')] });
    const problem = onlyAt(result.errors, 'nodes[2].name');
    expect(problem.message).toContain("two nodes share the name 'x'");
    expect(problem.message).toContain('nodes[0] and nodes[2]');
  });

  it('treats names as case-sensitive when checking duplicates', () => {
    expect(load({ nodes: [nodeFields('x'), nodeFields('X')] }).errors).toEqual([]);
  });

  it('accepts 64 nodes', () => {
    const nodes = Array.from({ length: 64 }, (_, i) => nodeFields(`n${i}`));
    const result = load({ nodes });
    expect(result.errors).toEqual([]);
    expect(result.config?.nodes).toHaveLength(64);
  });

  it('rejects 65 nodes with the count', () => {
    const nodes = Array.from({ length: 65 }, (_, i) => nodeFields(`n${i}`));
    const problem = onlyAt(load({ nodes }).errors, 'nodes');
    expect(problem.message).toBe('at most 64 nodes are supported, config has 65');
  });

  it('rejects a config without [[nodes]]', () => {
    const problem = onlyAt(load({ nodes: [] }).errors, 'nodes');
    expect(problem.message).toBe('no [[nodes]] tables');
  });

  it('loads `nodes = []` with a warning that every request will fail', () => {
    const result = load(`nodes = []\n${balancerToml({ nodes: [] })}`);
    expect(result.errors).toEqual([]);
    expect(result.config?.nodes).toEqual([]);
    expect(onlyAt(result.warnings, 'nodes').message).toContain('the node list is empty');
  });

  it('rejects `nodes` that is not an array of tables', () => {
    expect(onlyAt(load(`nodes = 5\n${balancerToml({ nodes: [] })}`).errors, 'nodes').message).toBe(
      'must be an array of tables, got number 5',
    );
    const result = load(`nodes = [1, "a"]\n${balancerToml({ nodes: [] })}`);
    expect(onlyAt(result.errors, 'nodes[0]').message).toBe('must be a table, got number 1');
    expect(onlyAt(result.errors, 'nodes[1]').message).toBe('must be a table, got the string "a"');
  });

  it('rejects unknown top-level keys with a hint', () => {
    const result = load(`${balancerToml()}\n[node]\nname = "x"\n`);
    const problem = onlyAt(result.errors, 'node');
    expect(problem.message).toBe('unknown top-level key');
    expect(problem.hint).toContain("did you mean 'nodes'?");
  });

  it("suggests 'server' for a misspelt [server] table", () => {
    const result = load(`[sever]\nhost = "127.0.0.1"\nport = 1\n${balancerToml({ server: null })}`);
    expect(onlyAt(result.errors, 'sever').hint).toContain("did you mean 'server'?");
    expect(onlyAt(result.errors, 'server').message).toBe('the [server] table is missing');
  });

  it('reports every problem in one pass with exact paths', () => {
    const result = load({
      server: { port: 'abc', enable_metric: true },
      nodes: [
        nodeFields('a'),
        nodeFields('b', { url: 'localhost:1234' }),
        nodeFields('c', { rps_limit: 0, rps_limt: 5 }),
        nodeFields('a', { reset_day: 32, tier: -1 }),
      ],
    });
    expect(result.config).toBeUndefined();
    expect(paths(result.errors).sort()).toEqual(
      [
        'server.port',
        'server.enable_metric',
        'nodes[1].url',
        'nodes[2].rps_limit',
        'nodes[2].rps_limt',
        'nodes[3].tier',
        'nodes[3].reset_day',
        'nodes[3].name',
      ].sort(),
    );
    for (const problem of result.errors) expect(problem.file).toBe(temp.path('config.toml'));
  });
});

describe('loadConfig: monthly_limit and the spillover threshold', () => {
  function threshold(monthly: TomlFields['x'], spillover?: number): number | undefined {
    const prices = {
      'prices/basic.toml': priceListToml({
        limits: spillover === undefined ? undefined : { spillover_percent: spillover },
      }),
    };
    const result = load({ nodes: [nodeFields('a', { monthly_limit: monthly })] }, { prices });
    expect(result.errors).toEqual([]);
    return result.config?.nodes[0]?.spilloverThreshold;
  }

  it('makes monthly_limit = 0 unmetered with an infinite threshold', () => {
    const node = loadNode({ monthly_limit: 0 }).config!.nodes[0]!;
    expect(node.monthlyLimit).toBeUndefined();
    expect(node.spilloverThreshold).toBe(Infinity);
  });

  it.each<[number, number | undefined, number]>([
    [1000, undefined, 950],
    [999, undefined, 949],
    [1, undefined, 0],
    [101, 33, 33],
    [1000, 100, 1000],
    [1000, 1, 10],
    [50_000_000, 95, 47_500_000],
  ])('threshold of %d credits at %s%% is %d', (monthly, percent, expected) => {
    expect(threshold(monthly, percent)).toBe(expected);
  });

  it('computes floor(limit × percent / 100) exactly for a limit near 2^53', () => {
    const limit = Number.MAX_SAFE_INTEGER;
    const exact = Number((BigInt(limit) * 95n) / 100n);
    expect(exact).toBe(8_556_839_292_003_941);
    expect(threshold(raw(String(limit)), 95)).toBe(exact);
  });

  it('rejects a monthly_limit a number cannot hold exactly, naming the field', () => {
    const result = loadNode({ monthly_limit: raw('18446744073709551615') });
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([
      expect.objectContaining({
        path: 'nodes[0].monthly_limit',
        message: 'must be between 0 and 9007199254740991, got 18446744073709551615',
      }),
    ]);
  });
});

describe('loadConfig: node URLs and the environment', () => {
  it('substitutes $VAR and ${VAR} from the env it is given', () => {
    const result = loadNode(
      { url: 'https://rpc.example.com/v2/${KEY_A}?api-key=$KEY_B' },
      { KEY_A: 'alpha', KEY_B: 'beta' },
    );
    expect(result.errors).toEqual([]);
    const node = result.config!.nodes[0]!;
    expect(node.url).toBe('https://rpc.example.com/v2/alpha?api-key=beta');
    expect(node.redactedUrl).toBe('https://rpc.example.com/v2/***?api-key=***');
  });

  it('reports an unset variable naming the variable and the node', () => {
    const result = loadNode({ url: 'https://rpc.example.com/?api-key=$HELIUS_API_KEY' });
    const problem = onlyAt(result.errors, 'nodes[0].url');
    expect(problem.message).toBe("env var HELIUS_API_KEY is required but not set (node 'node-a')");
  });

  it('reports each unset variable in a URL', () => {
    const result = loadNode({ url: 'https://$HOST_A/?k=$KEY_A' });
    expect(result.errors.map((problem) => problem.message)).toEqual([
      "env var HOST_A is required but not set (node 'node-a')",
      "env var KEY_A is required but not set (node 'node-a')",
    ]);
  });

  it('reports a malformed ${…} reference', () => {
    const problem = onlyAt(loadNode({ url: 'https://h/${A-B}' }).errors, 'nodes[0].url');
    expect(problem.message).toBe("malformed variable reference '${A-B}' (node 'node-a')");
  });

  it('hides userinfo and every query value in redactedUrl', () => {
    const node = loadNode({ url: 'https://user:pw@rpc.example.com/rpc?token=abc&x=1' }).config!
      .nodes[0]!;
    expect(node.redactedUrl).toBe('https://***@rpc.example.com/rpc?token=***&x=***');
  });

  it('keeps the path and port of a URL without secrets', () => {
    const node = loadNode({ url: 'https://rpc.example.com:8443/solana/mainnet' }).config!.nodes[0]!;
    expect(node.redactedUrl).toBe('https://rpc.example.com:8443/solana/mainnet');
  });

  it('reads ws_url with $VAR / ${VAR} and redacts it like url', () => {
    const result = loadNode(
      { ws_url: 'wss://ws.example.com/${PATH_KEY}?api-key=$KEY' },
      { PATH_KEY: 'p4th', KEY: 'k3y' },
    );
    expect(result.errors).toEqual([]);
    const node = result.config!.nodes[0]!;
    expect(node.wsUrl).toBe('wss://ws.example.com/p4th?api-key=k3y');
    expect(node.redactedWsUrl).toBe('wss://ws.example.com/***?api-key=***');
    expect(loadNode({}).config!.nodes[0]!.wsUrl).toBeUndefined();
  });

  it('refuses a ws_url that is not ws:// or wss://, and one with an unset variable', () => {
    const scheme = onlyAt(loadNode({ ws_url: 'https://h/' }).errors, 'nodes[0].ws_url');
    expect(scheme.message).toBe("unsupported scheme 'https:' for node 'node-a'");
    expect(scheme.hint).toContain('ws:// or wss://');
    const unset = onlyAt(loadNode({ ws_url: 'wss://h/?k=$NOPE' }).errors, 'nodes[0].ws_url');
    expect(unset.message).toBe("env var NOPE is required but not set (node 'node-a')");
  });
});

describe('loadConfig: warnings', () => {
  it('warns that max_concurrent = 0 makes a node unusable', () => {
    const result = loadNode({ max_concurrent: 0 });
    expect(result.errors).toEqual([]);
    expect(onlyAt(result.warnings, 'nodes[0].max_concurrent').message).toContain(
      "node 'node-a' can never be used with max_concurrent = 0",
    );
  });

  it.each(['0.0.0.0', '192.168.1.10', '::', '127.example.com'])(
    'warns when /metrics is served on %s',
    (host) => {
      const result = loadServer({ host, enable_metrics: true });
      expect(result.errors).toEqual([]);
      expect(onlyAt(result.warnings, 'server.enable_metrics').message).toContain(
        `/metrics is served on ${host}`,
      );
    },
  );

  it.each<[string, TomlFields]>([
    ['on loopback', { host: '127.0.0.1', enable_metrics: true }],
    ['on localhost', { host: 'localhost', enable_metrics: true }],
    ['on ::1', { host: '::1', enable_metrics: true }],
    ['on its own loopback port', { host: '0.0.0.0', enable_metrics: true, metrics_port: 9464 }],
    ['when metrics are off', { host: '0.0.0.0', enable_metrics: false }],
  ])('does not warn about /metrics %s', (_case, server) => {
    expect(loadServer(server).warnings).toEqual([]);
  });

  it.each([
    'http://rpc.example.com/?api-key=$KEY',
    'http://rpc.example.com/v2/$KEY',
    'http://rpc.example.com/?api-key=literal',
    'http://user:secret@rpc.example.com/',
    'http://127.example.com/?api-key=$KEY',
  ])('warns about an API key sent over plain http in %s', (url) => {
    const result = loadNode({ url }, { KEY: 'k' });
    expect(result.errors).toEqual([]);
    expect(onlyAt(result.warnings, 'nodes[0].url').message).toBe(
      "node 'node-a' sends what looks like an API key over plain http",
    );
  });

  it.each([
    'https://rpc.example.com/?api-key=$KEY',
    'http://rpc.example.com/',
    'http://127.0.0.1:8899/?api-key=$KEY',
    'http://localhost:8899/?api-key=$KEY',
    'http://[::1]:8899/?api-key=$KEY',
    'http://127.1.2.3:8899/?api-key=$KEY',
  ])('does not warn about %s', (url) => {
    const result = loadNode({ url }, { KEY: 'k' });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('still returns a config when there are only warnings', () => {
    const result = load({ server: { host: '0.0.0.0', enable_metrics: true } });
    expect(result.warnings).toHaveLength(1);
    expect(result.config).toBeDefined();
  });
});

describe('loadConfig: price lists', () => {
  it('names the resolved path of a missing price list', () => {
    const result = loadNode({ provider_pricing_path: 'prices/missing.toml' });
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([
      {
        file: path.join(temp.dir, 'prices/missing.toml'),
        path: '',
        message: 'cannot read price list: file not found',
        hint: expect.stringContaining('is relative, so it is read from the working directory'),
      },
    ]);
  });

  it('reports a price list that is not valid TOML', () => {
    const result = load({}, { prices: { 'prices/basic.toml': '[routing]\ngetBalance = \n' } });
    expect(result.config).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.file).toBe(temp.path('prices/basic.toml'));
    expect(result.errors[0]!.message).toMatch(/^not valid TOML/);
  });

  it('loads a list shared by several nodes once and reports its problems once', () => {
    const ok = load({ nodes: [nodeFields('a'), nodeFields('b')] });
    expect(ok.config!.nodes[0]!.pricing).toBe(ok.config!.nodes[1]!.pricing);
    const broken = load(
      { nodes: [nodeFields('a'), nodeFields('b')] },
      { prices: { 'prices/basic.toml': priceListToml({ routing: null }) } },
    );
    expect(paths(broken.errors)).toEqual(['routing']);
  });

  it('resolves price list paths against cwd, not the config file', () => {
    temp.write({
      'nested/config.toml': balancerToml(),
      'prices/basic.toml': priceListToml(),
    });
    const result = loadConfig({ cwd: temp.dir, configPath: 'nested/config.toml', env: {} });
    expect(result.errors).toEqual([]);
    expect(result.config!.nodes[0]!.pricing.path).toBe(temp.path('prices/basic.toml'));
  });

  it('reports node errors and price list errors together', () => {
    const result = load(
      { nodes: [nodeFields('a'), nodeFields('b', { rps_limit: 0 })] },
      { prices: { 'prices/basic.toml': priceListToml({ limits: { spillover_percent: 0 } }) } },
    );
    expect(paths(result.errors).sort()).toEqual(['limits.spillover_percent', 'nodes[1].rps_limit']);
  });
});

describe('loadConfig: reading the file', () => {
  it('names the file it tried when it is missing', () => {
    const result = loadConfig({ cwd: temp.dir, configPath: 'nope.toml', env: {} });
    expect(result.config).toBeUndefined();
    expect(result.path).toBe(temp.path('nope.toml'));
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({
      file: temp.path('nope.toml'),
      path: '',
      message: 'config file not found',
    });
    expect(result.errors[0]!.hint).toContain('--config');
  });

  it('reports invalid TOML with its line', () => {
    const result = load('[server]\nhost = "127.0.0.1"\nport = \n');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.message).toMatch(/^not valid TOML \(line 3, column \d+\): /);
  });

  it('reports a directory given as the config path', () => {
    temp.write({ 'dir/placeholder': '' });
    const result = loadConfig({ cwd: temp.dir, configPath: 'dir', env: {} });
    expect(result.errors[0]!.message).toMatch(/^cannot read config file/);
  });
});

describe('resolveConfigPath', () => {
  const cwd = '/srv/cascade';

  it('prefers --config over CONFIG_PATH', () => {
    expect(resolveConfigPath({ cwd, configPath: 'a.toml', env: { CONFIG_PATH: 'b.toml' } })).toBe(
      '/srv/cascade/a.toml',
    );
  });

  it('uses CONFIG_PATH without --config', () => {
    expect(resolveConfigPath({ cwd, env: { CONFIG_PATH: '/etc/cascade.toml' } })).toBe(
      '/etc/cascade.toml',
    );
  });

  it('falls back to config/balancer_config/config.toml under cwd', () => {
    expect(DEFAULT_CONFIG_PATH).toBe('config/balancer_config/config.toml');
    expect(resolveConfigPath({ cwd, env: {} })).toBe(
      '/srv/cascade/config/balancer_config/config.toml',
    );
  });

  it('treats an empty CONFIG_PATH as unset', () => {
    expect(resolveConfigPath({ cwd, env: { CONFIG_PATH: '' } })).toBe(
      '/srv/cascade/config/balancer_config/config.toml',
    );
  });

  it('is what loadConfig reads', () => {
    temp.write({ 'from-env.toml': balancerToml(), 'prices/basic.toml': priceListToml() });
    const viaEnv = loadConfig({ cwd: temp.dir, env: { CONFIG_PATH: 'from-env.toml' } });
    expect(viaEnv.errors).toEqual([]);
    expect(viaEnv.path).toBe(temp.path('from-env.toml'));
    const viaFlag = loadConfig({
      cwd: temp.dir,
      configPath: 'from-env.toml',
      env: { CONFIG_PATH: 'missing.toml' },
    });
    expect(viaFlag.errors).toEqual([]);
    const fallback = loadConfig({ cwd: temp.dir, env: {} });
    expect(fallback.path).toBe(temp.path(DEFAULT_CONFIG_PATH));
    expect(fallback.errors[0]!.message).toBe('config file not found');
  });
});

describe('loadDotEnv', () => {
  it('sets variables from .env without overriding ones already set', () => {
    temp.write({ '.env': 'API_KEY=from-file\nOTHER="quoted value"\nEMPTY_SET=file\n' });
    const env: NodeJS.ProcessEnv = { API_KEY: 'from-shell', EMPTY_SET: '' };
    const set = loadDotEnv(temp.dir, env);
    expect(set).toEqual(['OTHER']);
    expect(env).toEqual({ API_KEY: 'from-shell', OTHER: 'quoted value', EMPTY_SET: '' });
  });

  it('is fine without a .env file', () => {
    const env: NodeJS.ProcessEnv = { A: '1' };
    expect(loadDotEnv(temp.dir, env)).toEqual([]);
    expect(env).toEqual({ A: '1' });
  });

  it('finds the nearest .env in an ancestor directory', () => {
    temp.write({ '.env': 'FROM_PARENT=yes\n', 'deep/er/placeholder': '' });
    const env: NodeJS.ProcessEnv = {};
    expect(loadDotEnv(temp.path('deep/er'), env)).toEqual(['FROM_PARENT']);
    expect(env.FROM_PARENT).toBe('yes');
  });

  it('feeds node URLs when the loader uses the same env', () => {
    temp.write({ '.env': 'NODE_KEY=from-dotenv\n' });
    const env: NodeJS.ProcessEnv = {};
    loadDotEnv(temp.dir, env);
    const result = loadNode({ url: 'https://rpc.example.com/?k=$NODE_KEY' }, env);
    expect(result.config!.nodes[0]!.url).toBe('https://rpc.example.com/?k=from-dotenv');
  });
});
