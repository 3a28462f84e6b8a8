/**
 * Client keys and WebSockets already open (issue 27), through `cascade serve`: a key's secret
 * rotated or its entry removed by a reload (SIGHUP), or the key revoked (`cascade key revoke`),
 * closes the sockets that passed with it (1008, the reason saying why) and ends their
 * subscriptions upstream; the new secret connects; sockets of other keys stay open and keep
 * streaming.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { runCli, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { WsTestClient } from '../support/ws-client.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;

/** A fresh secret, as `cascade key new` makes them. */
function secret(): string {
  return `ck_${randomBytes(32).toString('base64url')}`;
}

function entry(name: string, key: string): string {
  const sha = createHash('sha256').update(key).digest('hex');
  return `[[keys]]\nname = "${name}"\nkey_sha256 = "${sha}"\n`;
}

interface Served {
  readonly p: CliProcess;
  readonly ws: string;
  readonly keysFile: string;
  readonly config: string;
  readonly dir: string;
  readonly clients: WsTestClient[];
  /** Rewrites the keys file and waits for the reload it was sent SIGHUP for. */
  reload(keys: string): Promise<void>;
  open(key: string, origin?: string): Promise<WsTestClient>;
}

async function serve(keys: string): Promise<Served> {
  const temp = fixture.tempDir();
  mocks.push(...(await startMockNodes([{ name: 'a' }])));
  const adminPort = await freePort();
  temp.write({
    'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\n[websocket]\nsubscribe = 1\n',
    'keys.toml': keys,
    'config.toml':
      `keys_file = "keys.toml"\n[server]\nhost = "127.0.0.1"\nport = 0\nadmin_port = ${adminPort}\n` +
      `require_key = true\n` +
      `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
  });
  const p = startCli(['serve', '--config', temp.path('config.toml')], { cwd: temp.dir });
  processes.push(p);
  const line = await p.waitFor(/cascade serving/);
  const url = (JSON.parse(line) as { url: string }).url;
  const clients: WsTestClient[] = [];
  let reloads = 0;
  return {
    p,
    ws: url.replace('http://', 'ws://'),
    keysFile: temp.path('keys.toml'),
    config: temp.path('config.toml'),
    dir: temp.dir,
    clients,
    async reload(next) {
      writeFileSync(temp.path('keys.toml'), next);
      reloads++;
      p.child.kill('SIGHUP');
      await expect
        .poll(() => p.output().match(/config reloaded/g)?.length ?? 0, { timeout: 30_000 })
        .toBe(reloads);
    },
    async open(key, origin) {
      const options = origin === undefined ? {} : { headers: { origin } };
      const client = await WsTestClient.open(`${url.replace('http://', 'ws://')}/${key}`, options);
      clients.push(client);
      return client;
    },
  };
}

/** Waits for `count` more notifications of subscription `id` (they come as the mock's slots pass). */
async function streams(client: WsTestClient, id: unknown, count: number): Promise<void> {
  const notes = await client.notifications(id, count);
  expect(notes).toHaveLength(count);
}

describe('open WebSockets when a key changes', { timeout: 60_000 }, () => {
  it('closes the sockets of a rotated or removed key with 1008; other keys keep streaming', async () => {
    const webOld = secret();
    const webNew = secret();
    const ops = secret();
    const s = await serve(`${entry('web', webOld)}\n${entry('ops', ops)}`);
    try {
      const opsSocket = await s.open(ops);
      const { result: opsSub } = await opsSocket.call('slotSubscribe');
      await streams(opsSocket, opsSub, 1);
      const web = await s.open(webOld);
      expect((await web.call('getSlot')).result).toBeTypeOf('number');
      expect((await web.call('rootSubscribe')).result).toBeDefined();

      // Rotation: web's entry now names another secret.
      await s.reload(`${entry('web', webNew)}\n${entry('ops', ops)}`);
      expect(await web.closed).toEqual({ code: 1008, reason: 'client key no longer valid' });
      await expect(s.open(webOld)).rejects.toThrow('HTTP 401');
      const rotated = await s.open(webNew);
      expect((await rotated.call('getSlot')).result).toBeTypeOf('number');
      await streams(opsSocket, opsSub, 2);

      // Removal: web's entry is gone.
      await s.reload(entry('ops', ops));
      expect(await rotated.closed).toEqual({ code: 1008, reason: 'client key no longer valid' });
      await expect(s.open(webNew)).rejects.toThrow('HTTP 401');
      await streams(opsSocket, opsSub, 2);
      expect(opsSocket.ws.readyState).toBe(opsSocket.ws.OPEN);
      expect((await opsSocket.call('getSlot')).result).toBeTypeOf('number');
    } finally {
      for (const client of s.clients) client.close();
    }
  });

  it('closes a revoked key’s socket and ends its subscription upstream', async () => {
    const web = secret();
    const ops = secret();
    const s = await serve(`${entry('web', web)}\n${entry('ops', ops)}`);
    try {
      const opsSocket = await s.open(ops);
      const { result: opsSub } = await opsSocket.call('slotSubscribe');
      const webSocket = await s.open(web);
      const { result: webSub } = await webSocket.call('rootSubscribe');
      await streams(webSocket, webSub, 1);
      await streams(opsSocket, opsSub, 1);
      const upstream = mocks[0]!.ws;
      expect(upstream.stats().subscriptions).toBe(2);

      const revoked = await runCli(['key', 'revoke', 'web', '--config', s.config], { cwd: s.dir });
      expect(revoked.stderr).toBe('');
      expect(revoked.code).toBe(0);
      expect(await webSocket.closed).toEqual({ code: 1008, reason: 'client key revoked' });
      const heard = webSocket.messages.length;
      // The node's rootSubscribe is let go; ops' slotSubscribe streams on.
      await expect.poll(() => upstream.stats().subscriptions, { timeout: 30_000 }).toBe(1);
      expect(upstream.stats().unsubscribes).toBe(1);
      await streams(opsSocket, opsSub, 3);
      expect(webSocket.messages.length).toBe(heard);
      await expect(s.open(web)).rejects.toThrow('HTTP 401');
    } finally {
      for (const client of s.clients) client.close();
    }
  });

  it('closes a browser socket whose origin the key no longer lists; other origins stream on', async () => {
    const web = secret();
    const withOrigins = (origins: string): string => `${entry('web', web)}origins = [${origins}]\n`;
    const s = await serve(withOrigins('"https://app.example", "https://old.example"'));
    try {
      const app = await s.open(web, 'https://app.example');
      const { result: appSub } = await app.call('slotSubscribe');
      const old = await s.open(web, 'https://old.example');
      expect((await old.call('getSlot')).result).toBeTypeOf('number');

      await s.reload(withOrigins('"https://app.example"'));
      expect(await old.closed).toEqual({
        code: 1008,
        reason: 'client key no longer valid for this origin',
      });
      await expect(s.open(web, 'https://old.example')).rejects.toThrow('HTTP 403');
      await streams(app, appSub, 2);
      expect((await app.call('getSlot')).result).toBeTypeOf('number');
    } finally {
      for (const client of s.clients) client.close();
    }
  });
});
