/**
 * Provider credentials — user:password in node URLs and header values, from the environment
 * or written literally — reach the upstreams that need them and appear nowhere else: not in
 * a log line (debug level, access log, penalties, reload, shutdown), /health, /metrics, an
 * error body, or `validate-config` (table or --json).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/run-cli.js';
import { startCli } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { freePort } from '../support/free-port.js';

const PRICES = path.join(REPO_ROOT, 'config/provider_config/solana.toml');
const fixture = useE2eFixture();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const ENV = {
  RPC_USER: 'envuser-S3CRET',
  RPC_PASSWORD: 'envpass-S3CRET',
  PROVIDER_KEY: 'envkey-S3CRET',
};
const LITERAL_PASSWORD = 'literalpass-S3CRET';
const LITERAL_HEADER = 'literalheader-S3CRET';
const basic = (user: string, password: string) =>
  Buffer.from(`${user}:${password}`).toString('base64');
const SECRETS = [
  ...Object.values(ENV),
  LITERAL_PASSWORD,
  LITERAL_HEADER,
  basic(ENV.RPC_USER, ENV.RPC_PASSWORD),
  basic('bob', LITERAL_PASSWORD),
  'S3CRET',
];

/** An upstream on 127.0.0.1 that answers only requests `allowed` accepts (401 otherwise). */
async function upstream(allowed: (req: IncomingMessage) => boolean): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (!allowed(req)) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":1,"result":777}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

function config(good: string, refusing: string, dead: string, bobPassword: string): string {
  const node = (name: string, tier: number, url: string, extra = '') =>
    `[[nodes]]\nname = "${name}"\nurl = "${url}"\ntier = ${tier}\nmonthly_limit = 0\n` +
    `provider_pricing_path = "${PRICES}"\n${extra}\n`;
  return (
    `[server]\nhost = "127.0.0.1"\nport = 0\nenable_metrics = true\n\n` +
    node('dead-basic', 0, `http://bob:${bobPassword}@${dead}/rpc`) +
    node(
      'refusing-key',
      1,
      `http://${refusing}/`,
      `headers = { "x-api-key" = "${LITERAL_HEADER}" }`,
    ) +
    node(
      'good',
      2,
      'http://${RPC_USER}:${RPC_PASSWORD}@' + good + '/',
      'headers = { "X-Api-Key" = "${PROVIDER_KEY}" }',
    )
  );
}

function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) {
    expect(text.includes(secret), `${where} contains ${secret}:\n${text}`).toBe(false);
  }
}

async function post(url: string, body: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, text: await response.text() };
}

describe('provider credentials', () => {
  it('reach the upstream and appear in no log line, /health, /metrics or error body', async () => {
    const good = await upstream(
      (req) =>
        req.headers.authorization === `Basic ${basic(ENV.RPC_USER, ENV.RPC_PASSWORD)}` &&
        req.headers['x-api-key'] === ENV.PROVIDER_KEY,
    );
    const refusing = await upstream(() => false);
    const dead = `127.0.0.1:${await freePort()}`;
    const dir = fixture.tempDir().dir;
    const file = path.join(dir, 'config.toml');
    writeFileSync(file, config(good, refusing, dead, LITERAL_PASSWORD));
    const p = startCli(['serve', '--config', file, '--access-log'], {
      cwd: dir,
      env: { ...ENV, LOG_LEVEL: 'debug' },
    });
    fixture.processes.push(p);
    const line = await p.waitFor(/cascade serving/);
    const url = (JSON.parse(line) as { url: string }).url;

    // The dead node fails (transport error) and the refusing one answers 401; both are
    // penalized, and the good node, which needs both kinds of credentials, answers.
    const answered = await post(url, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
    expect(answered).toEqual({ status: 200, text: '{"jsonrpc":"2.0","id":1,"result":777}' });
    const bodies = [(await post(url, '{"jsonrpc":')).text, (await post(url, '[]')).text];
    const health = await (await fetch(`${url}/health`)).text();
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('node="good"');

    // A reload that changes a literal password logs what changed, not the value.
    writeFileSync(file, config(good, refusing, dead, `${LITERAL_PASSWORD}2`));
    p.child.kill('SIGHUP');
    await p.waitFor(/config reloaded/);
    expect(await p.stop('SIGTERM')).toBe(0);

    expect(p.output()).toMatch(/node penalized/);
    expect(p.output()).toMatch(/"client":"127\.0\.0\.1"/);
    expectNoSecret('serve output', p.output());
    expectNoSecret('/health', health);
    expectNoSecret('/metrics', metrics);
    for (const body of bodies) expectNoSecret('an error body', body);
  });

  it('appear in neither validate-config output', async () => {
    const dir = fixture.tempDir().dir;
    const file = path.join(dir, 'config.toml');
    writeFileSync(file, config('127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3', LITERAL_PASSWORD));
    for (const args of [[], ['--json']]) {
      const result = await runCli(['validate-config', '--config', file, ...args], { env: ENV });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('dead-basic');
      expect(result.stdout).toContain('***@127.0.0.1');
      expectNoSecret(`validate-config ${args.join(' ')}`, result.stdout + result.stderr);
    }
  });

  it('appear in no config error either', async () => {
    const dir = fixture.tempDir().dir;
    const file = path.join(dir, 'config.toml');
    const broken = config('127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3', LITERAL_PASSWORD).replace(
      'tier = 2',
      'tier = -1',
    );
    writeFileSync(file, broken);
    const { PROVIDER_KEY: _missing, ...partial } = ENV;
    for (const args of [['validate-config'], ['validate-config', '--json'], ['serve']]) {
      const result = await runCli([...args, '--config', file], {
        env: { ...partial, PROVIDER_KEY: undefined },
      });
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).toContain('PROVIDER_KEY');
      expectNoSecret(args.join(' '), result.stdout + result.stderr);
    }
  });
});
