/** The keys of a public endpoint: CORS, compression, keep-alive, trusted proxies, node auth. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../../../test/helpers/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/helpers/temp-dir.js';
import { raw, type TomlFields } from '../../../test/helpers/toml.js';
import { loadConfig } from './load-config.js';
import { parseProxyRange } from './proxy-ranges.js';
import type { ConfigProblem, LoadResult } from './types.js';

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-public-');
});
afterEach(() => temp.cleanup());

function load(server: TomlFields, node: TomlFields = {}, env: NodeJS.ProcessEnv = {}): LoadResult {
  temp.write({
    'config.toml': balancerToml({ server, nodes: [nodeFields('node-a', node)] }),
    'prices/basic.toml': priceListToml(),
  });
  return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env });
}

function only(problems: readonly ConfigProblem[]): ConfigProblem {
  expect(problems, JSON.stringify(problems)).toHaveLength(1);
  return problems[0]!;
}

describe('[server] cors_origins', () => {
  it.each<[string, string, readonly string[]]>([
    ['"*"', '"*"', ['*']],
    [
      'a list',
      '["https://app.example", "http://localhost:5173"]',
      ['https://app.example', 'http://localhost:5173'],
    ],
    ['a list holding "*"', '["https://app.example", "*"]', ['https://app.example', '*']],
    ['an empty list (off)', '[]', []],
  ])('takes %s', (_name, value, expected) => {
    const result = load({ cors_origins: raw(value) });
    expect(result.errors).toEqual([]);
    expect(result.config?.server.corsOrigins).toEqual(expected);
  });

  it.each<[string, string, string, string]>([
    [
      'a single origin string',
      '"https://app.example"',
      'server.cors_origins',
      'must be "*" or a list of origins',
    ],
    [
      'a trailing slash',
      '["https://app.example/"]',
      'server.cors_origins[0]',
      "is not written as browsers send it: 'https://app.example'",
    ],
    [
      'a path',
      '["https://app.example/dapp"]',
      'server.cors_origins[0]',
      'is not written as browsers send it',
    ],
    ['upper case', '["https://App.example"]', 'server.cors_origins[0]', "'https://app.example'"],
    [
      'a default port',
      '["https://app.example:443"]',
      'server.cors_origins[0]',
      "'https://app.example'",
    ],
    ['no scheme', '["app.example"]', 'server.cors_origins[0]', 'is not an origin'],
    ['another scheme', '["ftp://app.example"]', 'server.cors_origins[0]', "scheme 'ftp:'"],
    ['a number', '["https://a.example", 5]', 'server.cors_origins[1]', 'must be a string'],
  ])('refuses %s, naming the entry', (_name, value, path, message) => {
    const problem = only(load({ cors_origins: raw(value) }).errors);
    expect(problem.path).toBe(path);
    expect(problem.message).toContain(message);
    expect(problem.hint).toBeTruthy();
  });
});

describe('[server] trusted_proxies', () => {
  it('takes addresses and CIDR ranges of both families', () => {
    const value = '["10.0.0.0/8", "192.0.2.10", "fd00::/8", "::1"]';
    const result = load({ trusted_proxies: raw(value) });
    expect(result.errors).toEqual([]);
    expect(result.config?.server.trustedProxies).toEqual([
      '10.0.0.0/8',
      '192.0.2.10',
      'fd00::/8',
      '::1',
    ]);
  });

  it.each([
    ['"10.0.0.0/8"', 'server.trusted_proxies', 'must be a list'],
    [
      '["lb.internal"]',
      'server.trusted_proxies[0]',
      "'lb.internal' is not an IP address or CIDR range",
    ],
    ['["10.0.0.0/33"]', 'server.trusted_proxies[0]', 'is not an IP address or CIDR range'],
    ['["10.0.0.0/"]', 'server.trusted_proxies[0]', 'is not an IP address or CIDR range'],
    ['["::1/129"]', 'server.trusted_proxies[0]', 'is not an IP address or CIDR range'],
  ])('refuses %s', (value, path, message) => {
    const problem = only(load({ trusted_proxies: raw(value) }).errors);
    expect(problem.path).toBe(path);
    expect(problem.message).toContain(message);
    expect(problem.hint).toContain('host names are not resolved');
  });

  it('parses ranges to what a BlockList takes', () => {
    expect(parseProxyRange('10.1.0.0/16')).toEqual({
      address: '10.1.0.0',
      prefix: 16,
      family: 'ipv4',
    });
    expect(parseProxyRange('2001:db8::7')).toEqual({
      address: '2001:db8::7',
      prefix: 128,
      family: 'ipv6',
    });
    expect(parseProxyRange('10.0.0.1/-1')).toBeUndefined();
  });
});

describe('[server] compression_min_bytes and keep_alive_timeout_ms', () => {
  it.each<[TomlFields, string, string]>([
    [
      { compression_min_bytes: -1 },
      'server.compression_min_bytes',
      'must be between 0 and 65536, got -1',
    ],
    [{ compression_min_bytes: 65537 }, 'server.compression_min_bytes', 'got 65537'],
    [
      { keep_alive_timeout_ms: 500 },
      'server.keep_alive_timeout_ms',
      'must be between 1000 and 3600000, got 500',
    ],
  ])('refuses %j', (server, path, message) => {
    const problem = only(load(server).errors);
    expect(problem.path).toBe(path);
    expect(problem.message).toContain(message);
  });

  it('explains the keep-alive rule in the hint', () => {
    const problem = only(load({ keep_alive_timeout_ms: 0 }).errors);
    expect(problem.hint).toContain('longer than its idle timeout (AWS ALB 60 s: 65000)');
  });
});

describe('[[nodes]] headers and URL credentials', () => {
  it('expands $VAR in header values and lower-cases the names', () => {
    const result = load(
      {},
      { headers: raw('{ "X-Api-Key" = "${KEY}", "x-tenant" = "t-$TENANT" }') },
      {
        KEY: 'sekret-1',
        TENANT: '42',
      },
    );
    expect(result.errors).toEqual([]);
    expect(result.config?.nodes[0]?.headers).toEqual({
      'x-api-key': 'sekret-1',
      'x-tenant': 't-42',
    });
  });

  it('has no headers by default', () => {
    expect(load({}).config?.nodes[0]?.headers).toEqual({});
  });

  it.each<[string, string, string]>([
    ['not a table', '"x-api-key: 1"', 'must be a table'],
    ['a bad name', '{ "x api key" = "1" }', "'x api key' is not a valid header name"],
    ['content-type', '{ "Content-Type" = "text/plain" }', "cannot set 'content-type'"],
    ['host', '{ host = "evil.example" }', "cannot set 'host'"],
    ['a name twice', '{ "x-key" = "1", "X-Key" = "2" }', "sets 'x-key' twice"],
    ['a number', '{ "x-key" = 12345 }', 'must be a string, got a non-string value'],
    ['an empty value', '{ "x-key" = "" }', "header 'x-key' of node 'node-a' is empty"],
    ['a line break', '{ "x-key" = "a\\r\\nx-injected: 1" }', 'holds a line break'],
  ])('refuses %s', (_name, value, message) => {
    const problem = only(load({}, { headers: raw(value) }).errors);
    expect(problem.path).toMatch(/^nodes\[0\]\.headers/);
    expect(problem.message).toContain(message);
  });

  it('names an unset variable and never prints a value', () => {
    const result = load(
      {},
      { headers: raw('{ "x-api-key" = "${MISSING_KEY}", "x-other" = "literal-secret" }') },
    );
    const problem = only(result.errors);
    expect(problem.path).toBe('nodes[0].headers.x-api-key');
    expect(problem.message).toBe(
      "env var MISSING_KEY is required but not set (node 'node-a', header 'x-api-key')",
    );
    expect(JSON.stringify(result)).not.toContain('literal-secret');
  });

  it('refuses URL credentials together with an authorization header', () => {
    const problem = only(
      load(
        {},
        { url: 'http://user:pw@127.0.0.1:8891/', headers: raw('{ authorization = "Bearer x" }') },
      ).errors,
    );
    expect(problem.message).toContain('has user:password in its URL and an authorization header');
  });

  it('refuses credentials with a broken %-escape, without quoting them', () => {
    const result = load({}, { url: 'http://user:p%zzw@127.0.0.1:8891/' });
    const problem = only(result.errors);
    expect(problem.path).toBe('nodes[0].url');
    expect(problem.hint).toContain('%25');
    expect(JSON.stringify(result.errors)).not.toContain('p%zzw');
  });

  it('warns when headers would cross the network unencrypted', () => {
    const result = load({}, { url: 'http://rpc.example/', headers: raw('{ "x-api-key" = "k" }') });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual(['nodes[0].headers']);
  });

  it('shows URL credentials as *** and keeps them in the URL it sends to', () => {
    const node = load({}, { url: 'https://user:pa%40ss@rpc.example/v1' }).config?.nodes[0];
    expect(node?.redactedUrl).toBe('https://***@rpc.example/v1');
    expect(node?.url).toBe('https://user:pa%40ss@rpc.example/v1');
  });
});
