/**
 * Client keys changed at runtime across replicas (issue 27), through `cascade`: two
 * `cascade serve` processes on one Redis, one of them with `--workers 2`. `cascade key revoke`
 * on the single replica reaches both workers of the other (their primary reads it at its sync
 * and hands it on); `cascade key unrevoke` on the primary's admin listener reaches the single
 * replica; `cascade key list` on either shows the fleet's state. Every call opens its own
 * connection, so node:cluster hands the calls to both workers.
 */
import { request } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyHash } from '../../src/core/config/keys-section.js';
import { assertBuilt, runCli, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';

const missing = redisUnavailable();
const OPS = 'ck_fleet_ops_e2e_0123456789abcdefghij';
/** Long enough for a busy machine; the exact bound is shown in redis-key-overrides.test.ts. */
const POLL = { timeout: 20_000, interval: 50 };

let temp: TempDir | undefined;
let redis: RedisServer | undefined;
let processes: CliProcess[] = [];

beforeAll(() => {
  assertBuilt();
  if (missing) console.warn(`skipping replica key tests: ${missing}`);
});

afterEach(async () => {
  const running = processes.filter((p) => p.child.exitCode === null);
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  processes = [];
  stopRecordingUpstreams();
  await redis?.stop();
  redis = undefined;
  temp?.cleanup();
  temp = undefined;
});

interface Replica {
  readonly port: number;
  readonly admin: string;
  readonly process: CliProcess;
}

async function startReplica(id: string, upstream: string, workers: number): Promise<Replica> {
  const port = await freePort();
  const admin = await freePort();
  writeFileSync(
    temp!.path(`${id}.toml`),
    `[server]\nhost = "127.0.0.1"\nport = ${port}\nadmin_port = ${admin}\nrequire_key = true\n` +
      `trusted_proxies = ["127.0.0.1"]\n` +
      `quotas_path = "${id}.json"\n\n` +
      `[cluster]\nredis_url = "${redis!.url}"\nkey_prefix = "e2e-keys"\nreplica_id = "${id}"\n` +
      `sync_interval_ms = 50\nlease_ttl_ms = 1000\n\n` +
      `[cache]\nenabled = false\ncoalesce = false\n\n` +
      `[[keys]]\nname = "ops"\nkey_sha256 = "${keyHash(OPS)}"\n\n` +
      `[[nodes]]\nname = "n"\nurl = "${upstream}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "prices.toml"\n`,
  );
  const args = ['serve', '--config', `${id}.toml`, '--access-log'];
  const process = startCli(workers > 1 ? [...args, '--workers', String(workers)] : args, {
    cwd: temp!.dir,
  });
  processes.push(process);
  await process.waitFor(workers > 1 ? /workers share the port/ : /cascade serving/);
  await expect
    .poll(
      async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status,
      POLL,
    )
    .toBe(200);
  return { port, admin: `http://127.0.0.1:${admin}`, process };
}

let clients = 0;

/**
 * One call on a connection of its own, from a client address of its own (through a trusted
 * balancer, as a dApp's users come): a revoked key's 401s count as failed checks per address,
 * and this test sends more of them than one address may fail (20, then 2 a second).
 */
function call(port: number): Promise<number> {
  const client = ++clients;
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/${OPS}`,
        method: 'POST',
        agent: false,
        headers: { 'x-forwarded-for': `10.9.${client >> 8}.${client & 255}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
  });
}

/** Ten calls at once: their statuses. */
function calls(port: number): Promise<number[]> {
  return Promise.all(Array.from({ length: 10 }, () => call(port)));
}

/** The pids of the processes whose access-log lines in `output` answered `status`. */
function pidsThatAnswered(output: string, status: number): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (entry.msg === 'request' && entry.status === status) pids.add(entry.pid as number);
  }
  return pids;
}

async function keyRow(admin: string): Promise<{ revoked: boolean }> {
  const listed = await runCli(['key', 'list', '--json', '--admin', admin], { cwd: temp!.dir });
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { keys: Array<{ revoked: boolean }> }).keys[0]!;
}

describe.skipIf(missing !== undefined)(
  'client keys changed through one replica, with --workers on another',
  { timeout: 180_000 },
  () => {
    it('revoke on one replica reaches both workers of the other; unrevoke through the primary comes back', async () => {
      temp = makeTempDir('cascade-replica-keys-');
      writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
      redis = await startRedis();
      const upstream = await recordingUpstream();
      const single = await startReplica('r0', upstream.url, 1);
      const pooled = await startReplica('r1', upstream.url, 2);
      expect(await calls(pooled.port)).toEqual(Array(10).fill(200));

      const revoked = await runCli(['key', 'revoke', 'ops', '--admin', single.admin], {
        cwd: temp.dir,
      });
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toContain('ops revoked on every replica');
      expect(await calls(single.port)).toEqual(Array(10).fill(401));
      // The primary of r1 reads it at its next sync and hands it to both workers.
      await expect.poll(() => calls(pooled.port), POLL).toEqual(Array(10).fill(401));
      const logged = pooled.process.output().length;
      expect(await calls(pooled.port)).toEqual(Array(10).fill(401));
      expect(pidsThatAnswered(pooled.process.output().slice(logged), 401).size).toBe(2);
      expect(await keyRow(pooled.admin)).toMatchObject({ revoked: true });

      const unrevoked = await runCli(['key', 'unrevoke', 'ops', '--admin', pooled.admin], {
        cwd: temp.dir,
      });
      expect(unrevoked.code).toBe(0);
      expect(unrevoked.stdout).toContain('ops is no longer revoked on every replica');
      expect(await calls(pooled.port)).toEqual(Array(10).fill(200));
      await expect.poll(() => calls(single.port), POLL).toEqual(Array(10).fill(200));
      expect(await keyRow(single.admin)).toMatchObject({ revoked: false });

      // From a machine where no replica runs (r0's config, another quotas file): `quota show`
      // reads the fleet from Redis, its revokes and budgets with its usage.
      expect((await runCli(['key', 'revoke', 'ops', '--admin', single.admin])).code).toBe(0);
      expect((await runCli(['key', 'budget', 'ops', '750', '--admin', single.admin])).code).toBe(0);
      writeFileSync(
        temp.path('elsewhere.toml'),
        readFileSync(temp.path('r0.toml'), 'utf8').replace(
          'quotas_path = "r0.json"',
          'quotas_path = "elsewhere.json"',
        ),
      );
      const shown = await runCli(['quota', 'show', '--json', '--config', 'elsewhere.toml'], {
        cwd: temp.dir,
      });
      expect(shown.code).toBe(0);
      const fleet = JSON.parse(shown.stdout) as {
        keys: Array<{ name: string; used: number; revoked: boolean; budget: number | null }>;
      };
      expect(fleet.keys).toEqual([
        expect.objectContaining({ name: 'ops', revoked: true, budget: 750 }),
      ]);
      // Thirty calls were served before the revoke (more if a poll round was part served).
      expect(fleet.keys[0]!.used).toBeGreaterThanOrEqual(30);
      // A key reset from there zeroes the fleet's total in Redis, as a node's does.
      const reset = await runCli(['quota', 'reset', '--key', 'ops', '--config', 'elsewhere.toml'], {
        cwd: temp.dir,
      });
      expect(reset.code).toBe(0);
      expect(reset.stdout).toContain('reset key ops for every replica (in Redis)');
      const used = async () => {
        const listed = await runCli(['key', 'list', '--json', '--admin', single.admin]);
        return (JSON.parse(listed.stdout) as { keys: Array<{ used: number }> }).keys[0]!.used;
      };
      await expect.poll(used, POLL).toBe(0);
      for (const replica of [single, pooled]) expect(await replica.process.stop('SIGTERM')).toBe(0);
    });
  },
);
