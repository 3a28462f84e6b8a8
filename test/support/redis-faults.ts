/**
 * One round of the issue-30 fault: two replicas (in this process) under steady load toward one
 * mock node, Redis SIGKILLed mid-load and started again — empty, or from a snapshot taken
 * earlier in the round — the load going on throughout, then both replicas shut down as on
 * SIGTERM. Phases end on request counts seen by the node, never on elapsed time, so a slow
 * machine runs the same round, only longer.
 */
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { nodeConfig, priceList } from './node-config.js';
import type { RedisServer } from './redis-server.js';
import { startReplica, type Replica } from './replicas.js';

/** How Redis comes back in a round. */
export type RedisReturn = 'empty' | 'snapshot';

/** What the node saw and what the fleet booked. */
export interface RoundResult {
  readonly seen: number;
  readonly booked: number;
}

/** Clients per replica, each sending one request after the other. */
const CLIENTS = 4;
/** Requests the node must see in each phase (before, during and after the outage). */
const PHASE = 80;
/** Bounded waits: polls of 10 ms (a minute, on a machine far busier than any CI). */
const MAX_POLLS = 6000;

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < MAX_POLLS; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function post(url: string): Promise<void> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  }).then(
    async (response) => void (await response.text()),
    () => undefined,
  );
}

/** Clients that keep posting to every replica until stopped. */
function load(fleet: readonly Replica[]): () => Promise<void> {
  let running = true;
  const loops = fleet.flatMap((replica) =>
    Array.from({ length: CLIENTS }, async () => {
      while (running) await post(replica.url);
    }),
  );
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

async function redisUp(replica: Replica): Promise<boolean> {
  return /^cascade_cluster_redis_up 1$/m.test(await replica.metrics());
}

/** Runs one round under `prefix`; Redis is running when it starts and when it ends. */
export async function faultRound(
  redis: RedisServer,
  prefix: string,
  comesBack: RedisReturn,
): Promise<RoundResult> {
  const [mock] = (await startMockNodes([{ name: 'n' }])) as [MockNode];
  const node = nodeConfig({
    name: 'n',
    url: mock.url,
    redactedUrl: mock.url,
    pricing: priceList({}, 1),
  });
  const fleet: Replica[] = [];
  try {
    for (const id of ['a', 'b'])
      // The default lease: a replica reconnecting to a restarted Redis has a whole lease to
      // claim its reserve again before Redis counts it as spent (the reconnect backs off to 1 s).
      fleet.push(
        await startReplica({
          id,
          redisUrl: redis.url,
          nodes: [node],
          prefix,
          cluster: { leaseTtlMs: 3000 },
        }),
      );
    const seen = (): number => mock.stats().requests;
    const stop = load(fleet);
    await until('load before the fault', () => seen() >= PHASE);
    if (comesBack === 'snapshot') {
      redis.snapshot();
      const at = seen();
      await until('load after the snapshot', () => seen() >= at + PHASE);
    }
    await redis.kill();
    const killedAt = seen();
    await until('load through the outage', () => seen() >= killedAt + PHASE);
    await redis.start({ fromSnapshot: comesBack === 'snapshot' });
    await until('both replicas to reach Redis again', async () =>
      (await Promise.all(fleet.map(redisUp))).every(Boolean),
    );
    const backAt = seen();
    await until('load after Redis returned', () => seen() >= backAt + PHASE);
    await stop();
    // SIGTERM: each drains, sends its last usage, writes quotas.json.
    await Promise.all(fleet.splice(0).map((replica) => replica.cascade.close()));
    const booked = Number(redis.cli('GET', `${prefix}:usage:n:${currentPeriod()}`) || '0');
    return { seen: seen(), booked };
  } finally {
    await Promise.all(fleet.map((replica) => replica.cascade.close()));
    await mock.close();
  }
}

/** The billing period (reset day 1) of today, as the usage key names it. */
export function currentPeriod(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}
