/**
 * The redis part of the cluster benchmark: one process with `[cluster] redis_url` vs one
 * without, side by side in the same windows at a fixed rate (and with no traffic): the proxy's
 * CPU per request, and the Redis commands per request and per second.
 */
import type { MockProcess } from '../src/mock/index.js';
import { startRedis, type CommandCalls } from './cluster-harness.js';
import { BODY, metered, sleep, startVariants, type Metered } from './cluster-metering.js';
import type { RedisWindow } from './cluster-report.js';
import { LoadClient } from './hotpath-load-client.js';

/** What cascade sends to Redis itself; every other command runs inside its sync script. */
const ROUND_TRIPS = new Set(['eval', 'evalsha', 'hello', 'ping', 'client|setinfo', 'script|load']);

/** Calls that were round trips from cascade, and calls made inside its scripts. */
function split(calls: CommandCalls): { roundTrips: number; inScript: number } {
  let roundTrips = 0;
  let inScript = 0;
  for (const [name, count] of Object.entries(calls)) {
    if (ROUND_TRIPS.has(name)) roundTrips += count;
    else inScript += count;
  }
  return { roundTrips, inScript };
}

/** Runs the redis part: `rounds` windows per rate (0 first: no traffic), both variants in each. */
export async function redisPart(
  dir: string,
  mocks: MockProcess,
  seconds: number,
  rounds: number,
  rates: readonly number[],
): Promise<{ windows: RedisWindow[]; redisVersion: string }> {
  const redis = await startRedis();
  const variants = await startVariants(dir, mocks, [
    { name: 'single', workers: 1 },
    { name: 'redis', workers: 1, redisUrl: redis.url },
  ]);
  const clients = variants.map((v) => new LoadClient(v.url, BODY, 20));
  const windows: RedisWindow[] = [];
  const record = (
    i: number,
    round: number,
    rate: number,
    m: Metered<readonly number[]>,
    calls: CommandCalls | undefined,
  ): void => {
    const requests = m.result[i]!;
    const cpu = m.proxyCpu[i]!;
    const { roundTrips, inScript } = calls ? split(calls) : { roundTrips: NaN, inScript: NaN };
    windows.push({
      variant: variants[i]!.variant.name,
      round,
      rate,
      requests,
      wallSeconds: m.wall,
      proxyCpuUsPerRequest: requests > 0 ? (cpu * 1e6) / requests : NaN,
      proxyCores: cpu / m.wall,
      machineCores: m.machineCpu / m.wall,
      redisRoundTripsPerSecond: roundTrips / m.wall,
      redisCommandsInScriptPerSecond: inScript / m.wall,
      redisRoundTripsPerRequest: requests > 0 ? roundTrips / requests : NaN,
      redisCalls: calls,
    });
  };
  /** Both variants in the same window, at `rate` each (0: no traffic). */
  const window = async (round: number, rate: number): Promise<void> => {
    redis.resetStats();
    // Which client starts first alternates by round (A, B then B, A).
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    const m = await metered(variants, mocks, async () => {
      if (rate === 0) {
        await sleep(seconds * 1000);
        return [0, 0];
      }
      const loads: number[] = [];
      await Promise.all(
        order.map(async (i) => {
          const load = await clients[i]!.fixedRate(rate, seconds);
          if (load.errors > 0)
            throw new Error(`${variants[i]!.variant.name}: ${load.errors} errors`);
          loads[i] = load.requests;
        }),
      );
      return loads;
    });
    const calls = redis.commandCalls();
    record(0, round, rate, m, undefined);
    record(1, round, rate, m, calls);
    process.stdout.write(`redis: ${rate}/s round ${round}: done\n`);
  };
  try {
    // Warm-up: the JIT compiles the hot path in the first seconds of traffic. At the low rate,
    // so that no backlog is left to spill into the windows with no traffic that come next.
    await Promise.all(clients.map((client) => client.fixedRate(rates[0]!, 3, false)));
    await sleep(1000);
    for (const rate of [0, ...rates]) {
      for (let round = 1; round <= rounds; round++) await window(round, rate);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(variants.map((v) => v.stop()));
    await redis.stop();
  }
  return { windows, redisVersion: redis.version };
}
