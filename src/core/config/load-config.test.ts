/** loadConfig: reading the file, and the warnings it gives besides errors. */
import { describe, expect, it } from 'vitest';
import { onlyAt, useConfigDir } from '../../../test/support/config-loading.js';
import type { TomlFields } from '../../../test/support/toml.js';
import { loadConfig } from './load-config.js';

const { temp, load, loadServer, loadNode } = useConfigDir();

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
    const warnings = loadServer(server).warnings;
    expect(warnings.filter((w) => w.path === 'server.enable_metrics')).toEqual([]);
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
    // /metrics exposed, and keyless calls on an exposed listener (issue 27).
    expect(result.warnings.map((w) => w.path)).toEqual(['server.enable_metrics', 'server.host']);
    expect(result.config).toBeDefined();
  });
});
