/**
 * `cascade key revoke|unrevoke|budget|list` against replicas sharing one Redis (issue 27): the
 * change made through any replica's admin listener is in force on every replica — HTTP calls
 * with the key refused 401 'revoked' on the others within their next sync, a budget set on one
 * held by all, a replica started later refusing the key from its first request, Redis
 * restarted empty or unreachable at the time of the command not un-revoking anything. Each
 * replica is a full `startCascade` in this process, on its own port and quotas file.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  runKeyBudget,
  runKeyList,
  runKeyRevoke,
  runKeyUnrevoke,
} from '../../src/commands/key-admin.js';
import type { CommandIo } from '../../src/commands/io.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { nodeConfig, priceList } from '../support/node-config.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { startReplica, type Replica } from '../support/replicas.js';

const missing = redisUnavailable();
const WEB = 'ck_admin_web_0123456789abcdefghijkl';
const OPS = 'ck_admin_ops_0123456789abcdefghijkl';
const KEYS = keysOf(clientKey('web', WEB, { monthlyCredits: 1000 }), clientKey('ops', OPS));
/** Long enough for a busy machine to run a few 50 ms syncs; the exact bound is shown in redis-key-overrides.test.ts. */
const POLL = { timeout: 10_000, interval: 20 };

let redis: RedisServer | undefined;
let mocks: MockNode[] = [];
let replicas: Replica[] = [];
let prefixCount = 0;

beforeAll(() => {
  if (missing) console.warn(`skipping Redis key admin tests: ${missing}`);
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.cascade.close()));
  replicas = [];
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
  await redis?.stop();
  redis = undefined;
});

/** One replica of the test's fleet: its own quotas file unless `quotasPath` names one. */
async function startOne(id: string, quotasPath?: string): Promise<Replica> {
  redis ??= await startRedis();
  if (mocks.length === 0) mocks = await startMockNodes([{ name: 'n' }]);
  const replica = await startReplica({
    id,
    redisUrl: redis.url,
    nodes: [
      nodeConfig({
        name: 'n',
        url: mocks[0]!.url,
        redactedUrl: mocks[0]!.url,
        pricing: priceList({}, 1),
      }),
    ],
    prefix: `ka${prefixCount}`,
    keys: KEYS,
    server: { adminPort: 0, requireKey: true },
    ...(quotasPath === undefined ? {} : { quotasPath }),
  });
  replicas.push(replica);
  return replica;
}

async function start(count: number): Promise<Replica[]> {
  if (replicas.length === 0) prefixCount++;
  const started: Replica[] = [];
  for (let i = 0; i < count; i++) started.push(await startOne(`r${replicas.length}`));
  return started;
}

/**
 * Stops `replica` (unless `close` is false: it is stopped already) and starts it again on the
 * same quotas file, as a restarted `cascade serve` would.
 */
async function restart(replica: Replica, close = true): Promise<Replica> {
  if (close) {
    await replica.cascade.close();
    replicas = replicas.filter((each) => each !== replica);
  }
  return startOne('r-restarted', replica.cascade.quotasPath);
}

/**
 * One call with `secret`: its status, with '401 revoked' and '429 budget' told apart; any other
 * refusal or failure comes with its error message, so an assertion that fails says why.
 */
async function call(replica: Replica, secret: string): Promise<string> {
  const response = await fetch(`${replica.url}/${secret}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  });
  const body = (await response.json()) as { error?: { message: string } };
  const message = body.error?.message ?? '';
  if (response.status === 401 && message.includes('revoked')) return '401 revoked';
  if (response.status === 429 && message.includes('budget')) return '429 budget';
  return message === '' ? String(response.status) : `${response.status} ${message}`;
}

/** A command's io: what it printed, on stdout and stderr. */
function capture(): CommandIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    out: (text) => stdout.push(text),
    err: (text) => stderr.push(text),
    env: {},
    cwd: process.cwd(),
    stdout,
    stderr,
  };
}

const at = (replica: Replica) => ({ admin: replica.admin! });

describe.skipIf(missing !== undefined)('client keys changed through one replica', () => {
  it('revoke on A is refused on B and C; a budget set on B holds on A and C; any replica lists it', async () => {
    const [a, b, c] = await start(3);
    for (const each of [a!, b!, c!]) expect(await call(each, WEB)).toBe('200');

    const revoked = capture();
    expect(await runKeyRevoke('web', at(a!), revoked)).toBe(0);
    expect(revoked.stdout.join('')).toContain(
      'web revoked on every replica (here now, the others within 50 ms)',
    );
    expect(revoked.stderr).toEqual([]);
    // Refused at once where it was made, and on the others at their next sync.
    expect(await call(a!, WEB)).toBe('401 revoked');
    await expect.poll(() => call(b!, WEB), POLL).toBe('401 revoked');
    await expect.poll(() => call(c!, WEB), POLL).toBe('401 revoked');
    expect(await call(c!, OPS)).toBe('200');
    // An ordinary change is not a loss Redis must be healed of.
    expect(a!.logs.join('\n')).not.toContain('Redis lost client keys');

    expect(await runKeyBudget('ops', '0', at(b!), capture())).toBe(0);
    expect(await call(b!, OPS)).toBe('429 budget');
    await expect.poll(() => call(a!, OPS), POLL).toBe('429 budget');
    await expect.poll(() => call(c!, OPS), POLL).toBe('429 budget');

    // `key list` against C shows what was decided on A and B.
    const listed = capture();
    expect(await runKeyList({ ...at(c!), json: true }, listed)).toBe(0);
    const rows = (JSON.parse(listed.stdout.join('')) as { keys: Array<Record<string, unknown>> })
      .keys;
    expect(rows.map(({ name, revoked, budget }) => ({ name, revoked, budget }))).toEqual([
      { name: 'web', revoked: true, budget: 1000 },
      { name: 'ops', revoked: false, budget: 0 },
    ]);

    // Taken back through C: served again everywhere.
    const unrevoked = capture();
    expect(await runKeyUnrevoke('web', at(c!), unrevoked)).toBe(0);
    expect(unrevoked.stdout.join('')).toContain('web is no longer revoked on every replica');
    expect(await runKeyBudget('ops', 'config', at(a!), capture())).toBe(0);
    for (const each of [a!, b!]) {
      await expect.poll(() => call(each, WEB), POLL).toBe('200');
      await expect.poll(() => call(each, OPS), POLL).toBe('200');
    }
  });

  it('a replica started after the revoke refuses the key from its first request', async () => {
    const [a] = await start(2);
    expect(await runKeyRevoke('web', at(a!), capture())).toBe(0);
    expect(await runKeyBudget('ops', '0', at(a!), capture())).toBe(0);
    const [late] = await start(1);
    expect(await call(late!, WEB)).toBe('401 revoked');
    expect(await call(late!, OPS)).toBe('429 budget');
  });

  it('Redis restarted empty: the key stays revoked on every replica, and on one started after', async () => {
    const [a, b] = await start(2);
    expect(await runKeyRevoke('web', at(a!), capture())).toBe(0);
    await expect.poll(() => call(b!, WEB), POLL).toBe('401 revoked');
    const prefix = `ka${prefixCount}`;
    expect(redis!.cli('HLEN', `${prefix}:keys`)).toBe('2');
    await redis!.restart();
    expect(redis!.cli('HLEN', `${prefix}:keys`)).toBe('0');
    for (const each of [a!, b!]) expect(await call(each, WEB)).toBe('401 revoked');
    // The replicas write back what Redis lost (the event: the field is there again).
    await expect.poll(() => redis!.cli('HLEN', `${prefix}:keys`), POLL).toBe('2');
    for (const each of [a!, b!]) expect(await call(each, WEB)).toBe('401 revoked');
    const [late] = await start(1);
    expect(await call(late!, WEB)).toBe('401 revoked');
  });

  it('a key reset through a replica answers with the reset usage; with Redis away it resets nothing', async () => {
    const [a, b] = await start(2);
    for (let i = 0; i < 3; i++) expect(await call(a!, WEB)).toBe('200');
    const reset = async (replica: Replica) => {
      const response = await fetch(`${replica.admin!}/admin/keys/web/reset`, { method: 'POST' });
      const body = (await response.json()) as { key?: { used: number }; error?: string };
      return { status: response.status, body };
    };
    const usedOn = async (replica: Replica) => {
      const out = capture();
      await runKeyList({ ...at(replica), json: true }, out);
      return (JSON.parse(out.stdout.join('')) as { keys: Array<{ used: number }> }).keys[0]!.used;
    };
    // A's calls have reached the fleet (a call booked before the reset and sent after it counts).
    await expect.poll(() => usedOn(b!), POLL).toBe(3);
    // The answer shows the reset (not the usage of the last sync), and A sees it next sync.
    const done = await reset(b!);
    expect(done.status).toBe(200);
    expect(done.body.key?.used).toBe(0);
    await expect.poll(() => usedOn(a!), POLL).toBe(0);
    expect(await call(a!, WEB)).toBe('200');
    await redis!.kill();
    const refused = await reset(a!);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toContain('nothing was reset: Redis did not take it');
    await redis!.start();
  });

  it('Redis unreachable when the key is revoked: refused here at once and after a restart, on the others once it is back', async () => {
    const [a, b] = await start(2);
    await redis!.kill();
    const revoked = capture();
    expect(await runKeyRevoke('web', at(a!), revoked)).toBe(0);
    expect(revoked.stdout.join('')).toContain('web revoked on this replica only for now');
    expect(revoked.stderr.join('')).toContain('Redis did not take the change yet');
    expect(revoked.stderr.join('')).toContain('on disk too, so a restart keeps it');
    expect(await call(a!, WEB)).toBe('401 revoked');
    // B cannot know yet: it keeps serving the key while Redis is away.
    expect(await call(b!, WEB)).toBe('200');
    // A restarted before Redis is back still refuses the key (its changes file), and sends the
    // change Redis never took once it can.
    const restarted = await restart(a!);
    expect(await call(restarted, WEB)).toBe('401 revoked');
    expect(await call(b!, WEB)).toBe('200');
    await redis!.start();
    await expect.poll(() => call(b!, WEB), POLL).toBe('401 revoked');
    expect(await call(restarted, WEB)).toBe('401 revoked');
  });

  it('Redis lost its data while every replica was down: a restarted replica brings the revoke back', async () => {
    const [a] = await start(1);
    expect(await runKeyRevoke('web', at(a!), capture())).toBe(0);
    expect(await runKeyBudget('ops', '0', at(a!), capture())).toBe(0);
    await a!.cascade.close();
    replicas = [];
    await redis!.restart();
    const prefix = `ka${prefixCount}`;
    expect(redis!.cli('HLEN', `${prefix}:keys`)).toBe('0');
    const back = await restart(a!, false);
    expect(await call(back, WEB)).toBe('401 revoked');
    expect(await call(back, OPS)).toBe('429 budget');
    // Written back to Redis: a replica with no file of its own refuses the key too.
    await expect.poll(() => redis!.cli('HLEN', `${prefix}:keys`), POLL).not.toBe('0');
    const [fresh] = await start(1);
    expect(await call(fresh!, WEB)).toBe('401 revoked');
    expect(await call(fresh!, OPS)).toBe('429 budget');
  });
});
