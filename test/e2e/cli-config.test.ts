/**
 * The built `cascade` binary, as an operator runs it: validate-config on good and broken
 * configs. Run `npm run build` first.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../support/config-files.js';
import { REPO_ROOT, assertBuilt, runCli } from '../support/cli-process.js';
import { json, lines } from '../support/cli-output.js';
import { useTempDir } from '../support/temp-dir.js';

const MOCK_CONFIG = 'config/balancer_config/mock_nodes.toml';
const MOCK_NODES = ['Helius-1', 'Helius-2', 'Alchemy-1', 'Alchemy-2', 'Triton-1', 'public-mirror'];

beforeAll(() => assertBuilt());

const temp = useTempDir('cascade-cli-');

describe('cascade validate-config', () => {
  it('prints the node table for the mock config and exits 0', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const header of ['node', 'tier', 'url', 'rps', 'monthly limit', 'price list']) {
      expect(result.stdout).toContain(header);
    }
    for (const name of MOCK_NODES) expect(result.stdout).toContain(name);
    expect(result.stdout).toContain('http://127.0.0.1:8891/');
    expect(result.stdout).toContain('unmetered');
    expect(result.stdout).toContain(
      `${path.join(REPO_ROOT, MOCK_CONFIG)}: OK, ${MOCK_NODES.length} node(s)`,
    );
  });

  it('reads CONFIG_PATH when --config is absent', async () => {
    const result = await runCli(['validate-config'], { env: { CONFIG_PATH: MOCK_CONFIG } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${path.join(REPO_ROOT, MOCK_CONFIG)}: OK`);
  });

  it('prefers --config over CONFIG_PATH', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG], {
      env: { CONFIG_PATH: 'does/not/exist.toml' },
    });
    expect(result.code).toBe(0);
  });

  it('falls back to config/balancer_config/config.toml and names it when missing', async () => {
    const result = await runCli(['validate-config'], { cwd: temp.dir });
    const tried = path.join(temp.dir, 'config/balancer_config/config.toml');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`error: ${tried}: config file not found`);
  });

  it('names the CONFIG_PATH file it tried', async () => {
    const result = await runCli(['validate-config'], {
      cwd: temp.dir,
      env: { CONFIG_PATH: 'custom/place.toml' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(path.join(temp.dir, 'custom/place.toml'));
  });

  function writeBroken(): string {
    temp.write({
      'broken.toml': balancerToml({
        server: { port: 70000 },
        nodes: [
          nodeFields('a', { provider_pricing_path: 'prices.toml' }),
          nodeFields('b', { provider_pricing_path: 'prices.toml', rps_limt: 5 }),
          nodeFields('c', { provider_pricing_path: 'prices.toml', rps_limit: 0 }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    return temp.path('broken.toml');
  }

  it('prints one line per problem on a broken config and exits 1', async () => {
    const file = writeBroken();
    const result = await runCli(['validate-config', '--config', 'broken.toml'], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const errors = lines(result.stderr).filter((line) => line.startsWith('error: '));
    expect(errors).toEqual([
      `error: ${file}: server.port: must be between 0 and 65535, got 70000 — a TCP port from 0 to 65535 (0 picks a free one)`,
      `error: ${file}: nodes[1].rps_limt: unknown key — did you mean 'rps_limit'?`,
      `error: ${file}: nodes[2].rps_limit: RPS for node 'c' cannot be 0 — set the provider rate limit in requests per second; omit the key for no limit`,
    ]);
    expect(lines(result.stderr).at(-1)).toBe(`${file}: 3 problem(s); nothing was started`);
  });

  it('prints problems as JSON with --json', async () => {
    const file = writeBroken();
    const result = await runCli(['validate-config', '--config', 'broken.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(1);
    const output = json(result);
    expect(Object.keys(output)).toEqual(['ok', 'path', 'errors', 'warnings', 'nodes']);
    expect(output).toMatchObject({ ok: false, path: file, warnings: [], nodes: [] });
    expect(output.errors).toEqual([
      {
        file,
        path: 'server.port',
        message: 'must be between 0 and 65535, got 70000',
        hint: 'a TCP port from 0 to 65535 (0 picks a free one)',
      },
      {
        file,
        path: 'nodes[1].rps_limt',
        message: 'unknown key',
        hint: "did you mean 'rps_limit'?",
      },
      {
        file,
        path: 'nodes[2].rps_limit',
        message: "RPS for node 'c' cannot be 0",
        hint: 'set the provider rate limit in requests per second; omit the key for no limit',
      },
    ]);
  });

  it('gives every --json problem a hint key, null when there is none', async () => {
    temp.write({ 'bad.toml': '[server\n' });
    const result = await runCli(['validate-config', '--config', 'bad.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(1);
    const errors = json(result).errors as Array<Record<string, unknown>>;
    expect(errors).toHaveLength(1);
    expect(Object.keys(errors[0]!).sort()).toEqual(['file', 'hint', 'message', 'path']);
    expect(errors[0]!.hint).toBeNull();
    expect(errors[0]!.message).toMatch(/^not valid TOML/);
  });

  it('prints the nodes as JSON with --json', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG, '--json']);
    expect(result.code).toBe(0);
    const output = json(result);
    expect(output).toMatchObject({ ok: true, path: path.join(REPO_ROOT, MOCK_CONFIG) });
    expect(output.errors).toEqual([]);
    expect(output.warnings).toEqual([]);
    const nodes = output.nodes as Array<Record<string, unknown>>;
    expect(nodes.map((node) => node.name)).toEqual(MOCK_NODES);
    expect(nodes[0]).toEqual({
      name: 'Helius-1',
      tier: 0,
      url: 'http://127.0.0.1:8891/',
      ws_url: 'ws://127.0.0.1:8891/',
      rps_limit: 30000,
      max_concurrent: 10000,
      monthly_limit: null,
      spillover_threshold: null,
      reset_day: 1,
      price_list: 'config/provider_config/helius.toml',
      methods_priced: expect.any(Number) as number,
      unknown_method_cost: null,
    });
    expect(nodes[2]).toMatchObject({ name: 'Alchemy-1', unknown_method_cost: 20 });
  });

  it('shows "no limit" as null in JSON and the threshold of a metered node', async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [
          nodeFields('metered', {
            rps_limit: undefined,
            max_concurrent: undefined,
            monthly_limit: 1000,
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml({ limits: { spillover_percent: 90 } }),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(0);
    expect((json(result).nodes as unknown[])[0]).toMatchObject({
      rps_limit: null,
      max_concurrent: null,
      monthly_limit: 1000,
      spillover_threshold: 900,
      price_list: 'prices.toml',
    });
    const human = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(human.stdout).toContain('no limit');
    expect(human.stdout).toContain('900');
  });

  it('prints warnings but still exits 0', async () => {
    temp.write({
      'config.toml': balancerToml({
        server: { host: '0.0.0.0', enable_metrics: true },
        nodes: [nodeFields('a', { provider_pricing_path: 'prices.toml' })],
      }),
      'prices.toml': priceListToml(),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `warning: ${temp.path('config.toml')}: server.enable_metrics: /metrics is served on 0.0.0.0`,
    );
    expect(result.stdout).toContain('OK, 1 node(s)');
  });

  it('reads variables from .env in the working directory', async () => {
    temp.write({
      '.env': 'CASCADE_E2E_KEY=from-dotenv\n',
      'config.toml': balancerToml({
        nodes: [
          nodeFields('a', {
            url: 'https://rpc.example.com/?k=$CASCADE_E2E_KEY',
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    const ok = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(ok.code).toBe(0);
    const shell = await runCli(['validate-config', '--config', 'config.toml', '--json'], {
      cwd: temp.dir,
      env: { CASCADE_E2E_KEY: 'from-shell' },
    });
    expect(shell.code).toBe(0);
  });

  it('names the unset variable and the node', async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [
          nodeFields('keyed', {
            url: 'https://rpc.example.com/?k=$CASCADE_E2E_UNSET',
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml'], {
      cwd: temp.dir,
      env: { CASCADE_E2E_UNSET: undefined },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "nodes[0].url: env var CASCADE_E2E_UNSET is required but not set (node 'keyed')",
    );
  });
});
