/** loadConfig and the environment: ${VAR} in node URLs, CONFIG_PATH and .env. */
import { describe, expect, it } from 'vitest';
import { balancerToml, priceListToml } from '../../../test/support/config-files.js';
import { onlyAt, useConfigDir } from '../../../test/support/config-loading.js';
import { DEFAULT_CONFIG_PATH, loadConfig, loadDotEnv, resolveConfigPath } from './load-config.js';

const { temp, loadNode } = useConfigDir();

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
