/**
 * A flood of wrong keys against `cascade serve` (issue 27) and the README's bound on what it
 * does to keyed traffic: no keyed call from another address is refused or made to wait on a
 * limit the flood fills (the failed-check limiter is per address), past its first 20 failures
 * an address's wrong keys are refused before they are hashed, and each refused wrong key costs
 * cascade less CPU than serving one keyed call — so a flood slows keyed traffic no more than as
 * many keyed calls would. Asserted with counts: answers, the limiter's refusals, and cascade's
 * CPU ticks per request (/proc, Linux), never with wall-clock timings.
 */
import { describe, expect, it } from 'vitest';
import { keyHash } from '../../src/core/config/keys-section.js';
import { readProcess } from '../../src/bench/process-stats.js';
import { startMockNodes } from '../../src/mock/index.js';
import { startCli } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const KEY = 'ck_flood_keyed_0123456789abcdefghij';
/** Addresses the flood comes from (X-Forwarded-For through the trusted loopback proxy). */
const FLOOD_ADDRESSES = 8;
/** Requests per measured phase: enough CPU ticks (10 ms each) for a ratio. */
const PER_PHASE = 3000;
const CONNECTIONS = 4;
const linux = readProcess(process.pid) !== undefined;

interface Tally {
  readonly statuses: Map<number, number>;
  readonly reasons: Map<string, number>;
}

function tally(): Tally {
  return { statuses: new Map(), reasons: new Map() };
}

async function send(url: string, key: string, from: string, into: Tally): Promise<void> {
  const response = await fetch(`${url}/${key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  });
  const body = (await response.json()) as { error?: { message: string } };
  into.statuses.set(response.status, (into.statuses.get(response.status) ?? 0) + 1);
  const reason = body.error?.message.split(' ').slice(0, 3).join(' ') ?? 'ok';
  into.reasons.set(reason, (into.reasons.get(reason) ?? 0) + 1);
}

let guess = 0;
/** A wrong key shaped like a real one, never the same twice. */
const wrongKey = () => `ck_wrong_${String(guess++).padStart(34, '0')}`;
const floodFrom = (i: number) => `10.9.0.${(i % FLOOD_ADDRESSES) + 1}`;

/** `total` calls over CONNECTIONS closed loops; `next` makes each call. */
async function run(total: number, next: (i: number) => Promise<void>): Promise<void> {
  let started = 0;
  const loop = async (): Promise<void> => {
    while (started < total) await next(started++);
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
}

/** cascade's CPU (µs) spent while `work` runs. */
async function cpuOf(pid: number, work: () => Promise<void>): Promise<number> {
  const before = readProcess(pid)!.cpuMicros;
  await work();
  return readProcess(pid)!.cpuMicros - before;
}

describe.skipIf(!linux)(
  `a flood of wrong keys${linux ? '' : ' (skipped: reads CPU time from /proc, Linux only)'}`,
  () => {
    it('never refuses nor holds up keyed calls, and costs cascade less per call than one', async () => {
      const temp = fixture.tempDir();
      const mocks = await startMockNodes([{ name: 'n' }]);
      fixture.mocks.push(...mocks);
      temp.write({
        'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\n',
        'config.toml':
          `[server]\nhost = "127.0.0.1"\nport = 0\nrequire_key = true\nenable_metrics = true\n` +
          `trusted_proxies = ["127.0.0.1"]\n[cache]\nenabled = false\ncoalesce = false\n` +
          `[[keys]]\nname = "app"\nkey_sha256 = "${keyHash(KEY)}"\n` +
          `[[nodes]]\nname = "n"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
      });
      const p = startCli(['serve', '--config', temp.path('config.toml')], { cwd: temp.dir });
      fixture.processes.push(p);
      const url = (JSON.parse(await p.waitFor(/cascade serving/)) as { url: string }).url;
      const pid = p.child.pid!;
      const keyed = tally();
      const flood = tally();
      const floodStarted = Date.now();
      // Warm both paths up first (JIT), outside the measurements.
      await run(500, () => send(url, KEY, '10.0.0.1', keyed));
      await run(500, (i) => send(url, wrongKey(), floodFrom(i), flood));

      const keyedCpu = await cpuOf(pid, () =>
        run(PER_PHASE, () => send(url, KEY, '10.0.0.1', keyed)),
      );
      const floodCpu = await cpuOf(pid, () =>
        run(PER_PHASE, (i) => send(url, wrongKey(), floodFrom(i), flood)),
      );
      // Both at once, as many flooding connections as keyed ones.
      let mixedFlood = 0;
      const stop = { done: false };
      const flooding = (async () => {
        await run(Number.MAX_SAFE_INTEGER, async (i) => {
          if (stop.done) throw new Error('stop');
          await send(url, wrongKey(), floodFrom(i), flood);
          mixedFlood++;
        }).catch(() => undefined);
      })();
      await run(PER_PHASE, () => send(url, KEY, '10.0.0.2', keyed));
      stop.done = true;
      await flooding;

      // Keyed calls: every one answered, none refused, through the flood.
      const keyedCalls = 500 + 2 * PER_PHASE;
      expect(keyed.statuses).toEqual(new Map([[200, keyedCalls]]));
      // The flood: 401 for the failures an address may make, 429 before hashing for the rest.
      const floodCalls = 500 + PER_PHASE + mixedFlood;
      expect([...flood.statuses.keys()].sort()).toEqual([401, 429]);
      expect(flood.statuses.get(401)! + flood.statuses.get(429)!).toBe(floodCalls);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const hashed = Number(
        /rpc_key_requests_total\{key="",outcome="unknown_key"\} (\d+)/.exec(metrics)![1],
      );
      const limited = Number(
        /rpc_key_requests_total\{key="",outcome="failed_checks"\} (\d+)/.exec(metrics)![1],
      );
      expect(hashed).toBe(flood.statuses.get(401));
      expect(limited).toBe(flood.statuses.get(429));
      // Each address: a burst of 20, then 2 a second for as long as the flood lasted.
      const floodSeconds = Math.ceil((Date.now() - floodStarted) / 1000);
      expect(hashed).toBeLessThanOrEqual(FLOOD_ADDRESSES * (20 + 2 * (floodSeconds + 1)));
      expect(limited).toBeGreaterThan(floodCalls / 2);
      // The bound: a refused wrong key costs cascade less CPU than a keyed call it serves.
      const perKeyed = keyedCpu / PER_PHASE;
      const perWrong = floodCpu / PER_PHASE;
      console.info(
        `flood: ${perWrong.toFixed(1)} µs of cascade CPU per wrong key, ${perKeyed.toFixed(1)} per keyed call (${(perWrong / perKeyed).toFixed(2)}×); ${mixedFlood} wrong keys during ${PER_PHASE} keyed calls`,
      );
      expect(perWrong).toBeLessThan(perKeyed);
      expect(await p.stop('SIGTERM')).toBe(0);
    }, 240_000);
  },
);
