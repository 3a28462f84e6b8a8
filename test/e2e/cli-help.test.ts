/**
 * The built `cascade` binary, as an operator runs it: help, version and usage errors.
 * Run `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT, assertBuilt, runCli } from '../support/cli-process.js';

const MOCK_CONFIG = 'config/balancer_config/mock_nodes.toml';

beforeAll(() => assertBuilt());

describe('cascade: help, version and usage errors', () => {
  it('lists validate-config and price in --help and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('validate-config');
    expect(result.stdout).toContain('price');
    expect(result.stdout).toMatch(/^Usage: cascade/);
  });

  it.each<[string, string]>([
    ['validate-config', 'cascade validate-config --config config/balancer_config/mock_nodes.toml'],
    ['price', 'cascade price getBalance'],
  ])('shows an example in `%s --help`', async (command, example) => {
    const result = await runCli([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Examples?:/);
    expect(result.stdout).toContain(example);
    expect(result.stdout).toContain('--config <path>');
    expect(result.stdout).toContain('--json');
  });

  it.each([
    ['--help'],
    ['price', 'getBalance', '--config', MOCK_CONFIG],
    ['mock-nodes', '--help'],
    ['serve', '--help'],
  ])(
    'stops quietly, exit 0, when the reader of its output is gone (`cascade %s | head`)',
    async (...args) => {
      const child = spawn(process.execPath, [CLI_PATH, ...args], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The reader leaves before the first line: every write meets a closed pipe (EPIPE).
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).not.toContain('EPIPE');
      expect(code).toBe(0);
    },
  );

  it.each(['--version', '-V'])('prints the package.json version for %s', async (flag) => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runCli([flag]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  it('exits 2 on an unknown command with a usage hint on stderr', async () => {
    const result = await runCli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown command 'frobnicate'");
    expect(result.stderr).toContain('cascade --help');
  });

  it('suggests the command a typo was meant to be', async () => {
    const result = await runCli(['validate-confg']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('validate-config');
  });

  it('exits 2 on an unknown flag with a usage hint on stderr', async () => {
    const result = await runCli(['validate-config', '--frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown option '--frobnicate'");
    expect(result.stderr).toContain('--help');
  });

  it('exits 2 when price gets no method', async () => {
    const result = await runCli(['price', '--config', MOCK_CONFIG]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing required argument 'method'");
  });
});
