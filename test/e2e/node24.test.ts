/**
 * The container image runs Node 24 (the Dockerfile pins the exact version) while these machines
 * run Node 20, so the e2e smoke also runs the built CLI on that exact Node: `serve --demo` and
 * `serve --config` with a reload, each answering a request, then SIGTERM and exit 0.
 * .ci/fetch-node24 puts that Node at .cache/node24/bin/node from the npm registry (package
 * node-linux-<arch>); without it the tests skip, saying why.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startMockNodes } from '../../src/mock/index.js';
import { describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../helpers/config-files.js';
import { CLI_PATH, REPO_ROOT } from '../helpers/run-cli.js';
import { startCli } from '../support/cli-process.js';
import { readImage } from '../support/dockerfile.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { freePort } from '../support/free-port.js';
import { postJson } from '../support/processes.js';

const NODE24 = path.join(REPO_ROOT, '.cache/node24/bin/node');
const PINNED = `v${readImage().nodeVersion}`;

function skipReason(): string | undefined {
  if (!existsSync(NODE24)) return `${NODE24} is missing — run .ci/fetch-node24`;
  const found = execFileSync(NODE24, ['--version'], { encoding: 'utf8' }).trim();
  if (found !== PINNED) {
    return `${NODE24} is ${found}, the Dockerfile pins ${PINNED} — run .ci/fetch-node24`;
  }
  return undefined;
}
const SKIP = skipReason();
if (SKIP) console.warn(`Node 24 e2e smoke skipped: ${SKIP}`);

const fixture = useE2eFixture();
const GET_BALANCE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'getBalance',
  params: ['11111111111111111111111111111111'],
};

describe.skipIf(SKIP !== undefined)(
  `the built CLI on the image's Node ${PINNED}${SKIP ? ` (skipped: ${SKIP})` : ''}`,
  () => {
    const launcher = [NODE24, CLI_PATH];

    it('serve --demo answers a request, keeps serving through SIGHUP, exits 0 on SIGTERM', async () => {
      const temp = fixture.tempDir();
      const port = await freePort();
      const args = ['serve', '--demo', '--host', '127.0.0.1', '--port', String(port)];
      const serve = startCli([...args, '--quotas', temp.path('quotas.json')], { launcher });
      fixture.processes.push(serve);
      await serve.waitFor(/cascade demo serving/);
      const url = `http://127.0.0.1:${port}`;
      expect(await postJson(`${url}/`, GET_BALANCE)).toMatchObject({ status: 200 });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`node_version="${PINNED}"`);

      serve.child.kill('SIGHUP');
      await serve.waitFor(
        /config reload failed; keeping the running config: .*no config file to reload/,
      );
      expect(await postJson(`${url}/`, GET_BALANCE)).toMatchObject({ status: 200 });
      expect(await serve.stop('SIGTERM')).toBe(0);
      expect(serve.output()).toContain('cascade stopped');
    });

    it('serve --config reloads a changed config on SIGHUP and writes usage on SIGTERM', async () => {
      const temp = fixture.tempDir();
      fixture.mocks.push(...(await startMockNodes([{ name: 'primary' }, { name: 'backup' }])));
      const [primary, backup] = fixture.mocks;
      const port = await freePort();
      const node = (name: string, url: string, tier: number) =>
        nodeFields(name, { url, tier, provider_pricing_path: temp.path('prices.toml') });
      const config = (nodes: ReturnType<typeof node>[]) =>
        balancerToml({ server: { port }, nodes });
      temp.write({
        'prices.toml': priceListToml({ routing: { getBalance: 3 } }),
        'config.toml': config([node('primary', primary!.url, 0)]),
      });
      const serve = startCli(['serve', '--config', temp.path('config.toml')], {
        launcher,
        cwd: temp.dir,
      });
      fixture.processes.push(serve);
      await serve.waitFor(/cascade serving/);
      const url = `http://127.0.0.1:${port}`;
      expect(await postJson(`${url}/`, GET_BALANCE)).toMatchObject({ status: 200 });

      writeFileSync(
        temp.path('config.toml'),
        config([node('primary', primary!.url, 0), node('backup', backup!.url, 1)]),
      );
      serve.child.kill('SIGHUP');
      await serve.waitFor(/config reloaded: \+1 -0 ~0/);
      const health = (await (await fetch(`${url}/health`)).json()) as { total_nodes: number };
      expect(health.total_nodes).toBe(2);

      expect(await serve.stop('SIGTERM')).toBe(0);
      const usage = JSON.parse(readFileSync(temp.path('quotas.json'), 'utf8')) as Record<
        string,
        { used: number }
      >;
      expect(usage.primary?.used).toBe(3);
    });
  },
);
