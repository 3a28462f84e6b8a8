/**
 * Issue 30, the kill -9 case: two `cascade serve` replicas under load, one SIGKILLed mid-load
 * and started again under the same name from its quotas.json, then both stopped with SIGTERM.
 * The fleet's usage must never be below what the node saw, and above it by at most the killed
 * replica's reserve plus the `unsent` its file held (the README's bound). Phases end on the
 * node's request counts, never on elapsed time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { assertBuilt, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { currentPeriod } from '../support/redis-faults.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';

const missing = redisUnavailable();
const ROUNDS = 3;
const PHASE = 60;
const MAX_POLLS = 6000;
let redis: RedisServer | undefined;
let temp: TempDir | undefined;
let mock: MockNode | undefined;
let processes: CliProcess[] = [];

beforeAll(() => {
  assertBuilt();
  if (missing) console.warn(`skipping replica kill tests: ${missing}`);
});

afterEach(async () => {
  const running = processes.filter((p) => p.child.exitCode === null && !p.child.signalCode);
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  processes = [];
  await mock?.close();
  mock = undefined;
  await redis?.stop();
  redis = undefined;
  temp?.cleanup();
});

async function until(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < MAX_POLLS; i++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

interface Replica {
  readonly id: string;
  readonly url: string;
  readonly config: string;
  readonly quotas: string;
  process?: CliProcess;
}

async function replicaFiles(id: string, prefix: string): Promise<Replica> {
  const port = await freePort();
  const config = temp!.path(`${prefix}-${id}.toml`);
  writeFileSync(
    config,
    `[server]\nhost = "127.0.0.1"\nport = ${port}\nquotas_path = "${prefix}-${id}.json"\n\n` +
      `[cluster]\nredis_url = "${redis!.url}"\nkey_prefix = "${prefix}"\nreplica_id = "${id}"\n` +
      `sync_interval_ms = 50\nlease_ttl_ms = 3000\n\n` +
      `[cache]\nenabled = false\ncoalesce = false\n\n` +
      `[[nodes]]\nname = "n"\nurl = "${mock!.url}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "prices.toml"\n`,
  );
  return {
    id,
    url: `http://127.0.0.1:${port}`,
    config,
    quotas: temp!.path(`${prefix}-${id}.json`),
  };
}

async function start(replica: Replica): Promise<void> {
  const process = startCli(['serve', '--config', replica.config], { cwd: temp!.dir });
  processes.push(process);
  replica.process = process;
  await process.waitFor(/cascade serving/);
}

/** Clients posting to `replica` while it runs, until stopped. */
function load(replica: Replica): () => Promise<void> {
  let running = true;
  const loops = Array.from({ length: 4 }, async () => {
    while (running && replica.process?.child.exitCode === null && !replica.process.child.signalCode)
      await fetch(replica.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      }).then(
        (response) => response.text(),
        () => '',
      );
  });
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

function unsentIn(file: string): number {
  try {
    const entry = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, { unsent?: number }>).n;
    return entry?.unsent ?? 0;
  } catch {
    return 0; // not written yet
  }
}

describe.skipIf(missing !== undefined)('a replica killed with kill -9 under load', () => {
  it(`leaves the fleet's usage at or above what the node saw, within the bound (${ROUNDS} rounds)`, async () => {
    redis = await startRedis();
    [mock] = (await startMockNodes([{ name: 'n' }])) as [MockNode];
    temp = makeTempDir('cascade-replica-kill-');
    writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
    for (let round = 0; round < ROUNDS; round++) {
      const prefix = `k${round}`;
      const before = mock.stats().requests;
      const seen = (): number => mock!.stats().requests - before;
      const [a, b] = [await replicaFiles('a', prefix), await replicaFiles('b', prefix)];
      await Promise.all([start(a), start(b)]);
      const stops = [load(a), load(b)];
      await until('load before the kill', () => seen() >= PHASE);
      a.process!.child.kill('SIGKILL');
      await a.process!.exited();
      const reserve = Number(
        (redis.cli('HGET', `${prefix}:reserve:n:${currentPeriod()}`, 'a') || '0').split(',')[0],
      );
      const unsent = unsentIn(a.quotas);
      await stops[0]!();
      const killedAt = seen();
      await until('load on the survivor', () => seen() >= killedAt + PHASE);
      await start(a); // same replica_id, same quotas.json
      stops[0] = load(a);
      const backAt = seen();
      await until('load on both again', () => seen() >= backAt + PHASE);
      await Promise.all(stops.map((stop) => stop()));
      expect(await a.process!.stop('SIGTERM')).toBe(0);
      expect(await b.process!.stop('SIGTERM')).toBe(0);
      const booked = Number(redis.cli('GET', `${prefix}:usage:n:${currentPeriod()}`));
      expect({ round, atLeast: booked >= seen() }).toEqual({ round, atLeast: true });
      expect(booked - seen()).toBeLessThanOrEqual(reserve + unsent);
    }
  });
});
