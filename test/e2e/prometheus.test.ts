/**
 * The real thing, where Debian's `prometheus` package is installed (`promtool` and
 * `prometheus` on PATH; .ci/run installs it): promtool lints a live scrape, then a real
 * Prometheus scrapes an in-process cascade every second and every dashboard query is
 * evaluated through its HTTP API. Skipped, saying why, when the binaries are missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  MONITORING_DIR,
  dashboardQueries,
  loadDashboard,
  substitute,
  variableRefs,
} from '../support/dashboard.js';
import { DASHBOARD_ACCOUNT, driveTraffic, ensurePeriodEnd } from '../support/dashboard-traffic.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';
import { startMultiChain } from '../support/multi-chain.js';
import { freePort } from '../support/free-port.js';

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const PROMTOOL = onPath('promtool');
const PROMETHEUS = onPath('prometheus');
const MISSING = [PROMTOOL ? '' : 'promtool', PROMETHEUS ? '' : 'prometheus'].filter(Boolean);
const SKIP_NOTE =
  MISSING.length > 0
    ? ` (skipped: ${MISSING.join(' and ')} not on PATH — install Debian's prometheus package: apt-get install prometheus)`
    : '';
if (MISSING.length > 0) console.warn(`prometheus e2e tests${SKIP_NOTE}`);

const JOB = 'cascade';
/** Prometheus scrapes every second, so [5s] windows hold several samples. */
const RATE_INTERVAL = '5s';

/** Runs a command; resolves with its exit code and output. */
function run(
  command: string,
  args: readonly string[],
  input?: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(input ?? '');
  });
}

/**
 * Retries `attempt` every 200 ms until it returns a value, or throws after `timeoutMs`. The
 * bounds below only catch a Prometheus that never gets there: they are several times what an
 * idle machine needs, because a busy one slows its start-up and scrapes.
 */
async function eventually<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface QueryResult {
  readonly status: string;
  readonly error?: string;
  readonly data?: { readonly resultType: string; readonly result: unknown[] };
}

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

describe.skipIf(MISSING.length > 0)(`a real Prometheus${SKIP_NOTE}`, () => {
  let harness: Harness;
  let temp: TempDir;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let apiUrl = '';
  let traffic: Promise<void> | undefined;
  let trafficOn = false;

  async function query(expr: string): Promise<QueryResult> {
    const response = await fetch(`${apiUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await response.json()) as QueryResult;
  }

  async function stopPrometheus(): Promise<void> {
    const child = prometheus;
    if (!child || !isAlive(child)) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  beforeAll(async () => {
    temp = makeTempDir('cascade-prometheus-');
    // The premium node is billed to a provider account: the Accounts panels need one.
    harness = await startHarness(
      [
        { name: 'premium', tier: 0, monthlyLimit: 100_000, rpsLimit: 40, account: 'plan' },
        { name: 'backup', tier: 1 },
        {
          name: 'flaky',
          tier: 2,
          mock: { fault: { kind: 'http', status: 503 }, failureRate: 0.5 },
        },
      ],
      { accounts: [DASHBOARD_ACCOUNT] },
    );
    await ensurePeriodEnd(harness.server);
    trafficOn = true;
    traffic = (async () => {
      while (trafficOn) {
        await driveTraffic(harness.url, 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
  });

  afterAll(async () => {
    trafficOn = false;
    await traffic;
    await stopPrometheus();
    await harness?.close();
    temp?.cleanup();
  });

  it('promtool accepts monitoring/prometheus.yml', async () => {
    const result = await run(PROMTOOL!, [
      'check',
      'config',
      path.join(MONITORING_DIR, 'prometheus.yml'),
    ]);
    expect(result.code, result.output).toBe(0);
  });

  it('promtool check metrics finds nothing to complain about in a live scrape', async () => {
    await driveTraffic(harness.url, 5);
    const scrape = await harness.metrics();
    expect(scrape).toContain(' NaN\n');
    expect(scrape).toContain(' +Inf\n');
    const result = await run(PROMTOOL!, ['check', 'metrics'], scrape);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('promtool check metrics accepts the series of two chains and their provider accounts', async () => {
    const chains = await startMultiChain(
      [
        { name: 'sol', nodes: [{ name: 'sol-a', toml: 'tier = 0\naccount = "shared"' }] },
        { name: 'evm', nodes: [{ name: 'evm-a', toml: 'tier = 0\naccount = "free"' }] },
      ],
      {
        top: '[[accounts]]\nname = "shared"\nmonthly_limit = 1000\n[[accounts]]\nname = "free"\nmonthly_limit = 0',
      },
    );
    try {
      await driveTraffic(`${chains.url}/sol`, 3);
      await driveTraffic(`${chains.url}/evm`, 3);
      const scrape = await (await fetch(`${chains.url}/metrics`)).text();
      expect(scrape).toContain('\nrpc_account_quota{account="free"} +Inf\n');
      expect(scrape).toMatch(/\nrpc_chain_requests_total\{chain="evm",outcome="bad_request"\} 1\n/);
      const result = await run(PROMTOOL!, ['check', 'metrics'], scrape);
      expect(result.output).toBe('');
      expect(result.code).toBe(0);
    } finally {
      await chains.close();
    }
  });

  it('scrapes cascade and answers every dashboard query with data', async () => {
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    const target = new URL(harness.url).host;
    const config = temp.path('prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n` +
        `scrape_configs:\n  - job_name: ${JOB}\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    prometheus = spawn(
      PROMETHEUS!,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${temp.path('data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    prometheus.stderr!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));

    await eventually(
      'Prometheus to be ready',
      async () => ((await fetch(`${apiUrl}/-/ready`)).ok ? true : undefined),
      30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${prometheusLog}`);
    });
    await eventually(
      'three successful scrapes',
      async () => {
        const result = await query(`sum_over_time(up{job="${JOB}"}[1m])`);
        const value = (result.data?.result[0] as { value?: [number, string] } | undefined)?.value;
        return value && Number(value[1]) >= 3 ? true : undefined;
      },
      30_000,
    );

    // The lag panels need a head two nodes confirm. A slow loop (a busy machine) leaves all the
    // traffic to premium, and head sampling stays within a tier: a burst past premium's
    // rps_limit makes the backup answer too, and show its head.
    await eventually(
      'a node lag in the scrape',
      async () => {
        const getSlot = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' });
        const burst = Array.from({ length: 60 }, () =>
          fetch(harness.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: getSlot,
          }).then((response) => response.arrayBuffer()),
        );
        await Promise.all(burst);
        return (await harness.metrics()).includes('\nrpc_node_lag{') ? true : undefined;
      },
      30_000,
    );

    const dashboard = loadDashboard();
    const failures: string[] = [];
    for (const q of dashboardQueries(dashboard)) {
      const expr = substitute(q.expr, { rateInterval: RATE_INTERVAL, job: JOB });
      try {
        await eventually(
          `${q.panel} / ${q.refId}`,
          async () => {
            const result = await query(expr);
            if (result.status !== 'success') throw new Error(result.error);
            return result.data!.result.length > 0 ? true : undefined;
          },
          10_000,
        );
      } catch (err) {
        failures.push(`${q.panel} / ${q.refId}: ${expr}\n  ${(err as Error).message}`);
      }
    }
    for (const { metric, label } of variableRefs(dashboard)) {
      const url = `${apiUrl}/api/v1/label/${label}/values?match[]=${encodeURIComponent(metric)}`;
      const values = ((await (await fetch(url)).json()) as { data: string[] }).data;
      if (values.length === 0) failures.push(`variable label_values(${metric}, ${label}) is empty`);
    }
    expect(failures).toEqual([]);
  });

  it('stops Prometheus when done', async () => {
    const child = prometheus!;
    await stopPrometheus();
    expect(isAlive(child)).toBe(false);
    expect(() => process.kill(child.pid!, 0)).toThrow();
  });
});
