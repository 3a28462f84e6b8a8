/**
 * The npm package as a user gets it: `npm pack`, install the tarball into an empty folder, then
 * `npx cascade --help`, `cascade validate-config` on the shipped example (copied into the
 * project, as the README says) and `cascade serve --demo` answering a request. The tarball holds
 * dist/ (JavaScript only, built from the current sources), config/ and monitoring/: no tests,
 * benchmarks, source maps or sources. The install is --prefer-offline (npm ci filled the cache)
 * and bounded in time.
 */
import { execFile } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { postJson } from '../support/processes.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALL_TIMEOUT_MS = 150_000;

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: Array<{ path: string }>;
}

let temp: TempDir;
let pack: PackResult;
let project: string;
let serve: CliProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  temp = makeTempDir('cascade-package-');
  // --ignore-scripts: `prepare` would rebuild dist/ under the other tests' feet; npm test has
  // just built it, and the content checks below prove it matches the sources.
  const packed = await run(
    NPM,
    ['pack', '--ignore-scripts', '--json', '--pack-destination', temp.dir],
    { cwd: REPO_ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
  );
  pack = (JSON.parse(packed.stdout) as PackResult[])[0]!;
  project = temp.path('project');
  temp.write({ 'project/package.json': '{ "name": "uses-cascade", "private": true }\n' });
  await run(
    NPM,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', temp.path(pack.filename)],
    { cwd: project, timeout: INSTALL_TIMEOUT_MS },
  );
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await serve?.stop('SIGKILL');
  temp?.cleanup();
});

/** Every file under `dir` (relative to REPO_ROOT), as posix paths. */
function tree(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { recursive: true })
    .map((file) => path.posix.join(dir, String(file).split(path.sep).join('/')))
    .filter((file) => statSync(path.join(REPO_ROOT, file)).isFile());
}

describe('npm pack', () => {
  it('holds dist/ JavaScript, config/, monitoring/, web/, package.json and README.md only', () => {
    const files = pack.files.map((file) => file.path);
    for (const file of files) {
      expect(file).toMatch(
        /^(dist\/.+\.js|config\/.+\.toml|monitoring\/.+|web\/status\.html|package\.json|README\.md)$/,
      );
      expect(file).not.toMatch(/\.map$|\.test\.js$|hotpath/);
    }
    expect(files).toEqual(expect.arrayContaining(tree('monitoring')));
    expect(files).toContain('config/balancer_config/mock_nodes.toml');
    expect(files).toContain('config/provider_config/helius.toml');
    expect(files).toContain('web/status.html');
  });

  it('ships exactly the build of the current sources (nothing stale, nothing missing)', () => {
    const built = pack.files.map((file) => file.path).filter((file) => file.startsWith('dist/'));
    const sources = tree('src')
      .filter((file) => file.endsWith('.ts') && !/\.(test|d)\.ts$/.test(file))
      .map((file) => file.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'));
    const stale = built.filter((file) => !sources.includes(file));
    expect(stale, 'stale files in dist/: rm -rf dist && npm run build').toEqual([]);
    expect(built.sort()).toEqual(sources.sort());
  });

  it('is the size the README states', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const stated = /about (\d+) kB packed/.exec(readme);
    expect(stated, 'README states the packed size as "about N kB packed"').not.toBeNull();
    const kb = pack.size / 1000;
    // Within a third: code grows between releases; shipping maps or tests would double it.
    expect(kb).toBeGreaterThan(Number(stated![1]) / 1.33);
    expect(kb).toBeLessThan(Number(stated![1]) * 1.33);
  });
});

describe('the installed package', () => {
  it('npx cascade --help lists the commands', async () => {
    const { stdout } = await run('npx', ['--no-install', 'cascade', '--help'], {
      cwd: project,
      timeout: 90_000,
    });
    expect(stdout).toContain('Usage: cascade');
    for (const command of ['serve', 'mock-nodes', 'validate-config', 'quota']) {
      expect(stdout).toContain(command);
    }
  });

  it('validate-config accepts the shipped example once copied into the project', async () => {
    cpSync(path.join(project, 'node_modules/cascade-rpc/config'), path.join(project, 'config'), {
      recursive: true,
    });
    // Exits non-zero → execFile rejects with the output, and the test fails showing it.
    const result = await run(
      path.join(project, 'node_modules/.bin/cascade'),
      ['validate-config', '--config', 'config/balancer_config/config.example.toml'],
      {
        cwd: project,
        env: { ...process.env, CONFIG_PATH: '', HELIUS_API_KEY: 'key-1', ALCHEMY_API_KEY: 'key-2' },
        timeout: 90_000,
      },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('public-mainnet');
    expect(result.stdout).not.toContain('key-1');
  });

  it('serve --demo answers a request and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    serve = startCli(
      ['serve', '--demo', '--host', '127.0.0.1', '--port', String(port), '--quotas', 'usage.json'],
      { cwd: project, launcher: [path.join(project, 'node_modules/.bin/cascade')] },
    );
    await serve.waitFor(/cascade demo serving/);
    const answer = await postJson(`http://127.0.0.1:${port}/`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'getSlot',
    });
    expect(answer).toMatchObject({ status: 200, json: { jsonrpc: '2.0', id: 1 } });
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});
