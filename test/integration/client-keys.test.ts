/**
 * Client keys (issue 27) through every door — an HTTP request, an HTTP batch element, a
 * WebSocket request, a WebSocket batch element and a subscription: where a key may be put,
 * and every refusal, each with no upstream request (the mocks' stats) and no node credit.
 * Rate buckets run on a ManualClock, so nothing depends on how fast the machine is.
 */
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { WsTestClient, type Json } from '../support/ws-client.js';
import { useWsHarness } from '../support/ws-harness.js';

const KEY = 'ck_alpha_0123456789abcdefghijklmnop';
const WRONG = 'ck_wrong_0123456789abcdefghijklmnop';
const BETA = 'ck_beta_0123456789abcdefghijklmnopq';
const ws = useWsHarness();

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Json; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json()) as Json,
    headers: response.headers,
  };
}

const notification = () => ({ jsonrpc: '2.0', method: 'getSlot', params: [] });

const call = (method: string, id: unknown = 1, params: unknown[] = []) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

function upstreamRequests(): number {
  return Object.values(ws.harness.mocks).reduce(
    (sum, mock) => sum + Object.values(mock.stats().byMethod).reduce((a, b) => a + b, 0),
    0,
  );
}

function nodeCredits(): number {
  return ws.harness.cascade.server.topology.table.all.reduce(
    (sum, node) => sum + node.usage.used,
    0,
  );
}

async function startKeyed(keys = keysOf(clientKey('alpha', KEY)), requireKey = true) {
  const clock = new ManualClock();
  await ws.start([{ name: 'a', prices: { getSlot: 2, getBalance: 3, getProgramAccounts: 10 } }], {
    keys,
    clock,
    server: { requireKey },
  });
  return clock;
}

describe('where a client puts its key', () => {
  it('is read from the path, ?api-key=, x-api-key and Authorization: Bearer; never forwarded', async () => {
    await startKeyed();
    const { url } = ws.harness;
    const ways: Array<[string, Record<string, string>]> = [
      [`${url}/${KEY}`, {}],
      [`${url}/${KEY}/send-request`, {}],
      [`${url}/?api-key=${KEY}`, {}],
      [`${url}/`, { 'x-api-key': KEY }],
      [`${url}/send-request`, { authorization: `Bearer ${KEY}` }],
    ];
    for (const [at, headers] of ways) {
      const answer = await post(at, call('getSlot'), headers);
      expect(answer.status, at).toBe(200);
      expect(answer.json.result).toBeTypeOf('number');
    }
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(5);
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('getSlot')).result).toBeTypeOf('number');
    const byHeader = await ws.open(ws.harness.wsUrl, { headers: { 'x-api-key': KEY } });
    expect((await byHeader.call('getSlot')).result).toBeTypeOf('number');
  });

  it('keeps cascade open as today when no key is configured, and 404s unknown paths', async () => {
    await ws.start([{ name: 'a' }]);
    expect((await post(ws.harness.url, call('getSlot'))).status).toBe(200);
    const response = await fetch(`${ws.harness.url}/${KEY}`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
  });
});

describe('refusals touch no node', () => {
  it('401s a call without a key or with an unknown one, saying how to pass one', async () => {
    await startKeyed();
    const { url } = ws.harness;
    const none = await post(url, call('getSlot', 7));
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ id: 7, error: { code: -32001 } });
    expect(none.json.error.message).toContain('x-api-key');
    const unknown = await post(`${url}/${WRONG}`, call('getSlot', 8));
    expect(unknown.status).toBe(401);
    expect(unknown.json.error.message).toContain('Unknown client key');
    // A batch is answered as a batch: one error per element, under each element's own id.
    const batch = await post(url, [call('getSlot', 1), call('getSlot', 'two'), notification()]);
    expect(batch.status).toBe(401);
    expect(batch.json).toMatchObject([
      { id: 1, error: { code: -32001 } },
      { id: 'two', error: { code: -32001 } },
    ]);
    expect(batch.json).toHaveLength(2);
    const wrongBatch = await post(`${url}/${WRONG}`, [call('getSlot', 3)]);
    expect(wrongBatch.json).toMatchObject([{ id: 3, error: { code: -32001 } }]);
    // Over [server] max_batch_size: one 400, sized before the key check (no error per element).
    const huge = Array.from({ length: 101 }, (_, i) => call('getSlot', i));
    for (const at of [url, `${url}/${WRONG}`]) {
      const over = await post(at, huge);
      expect(over.status).toBe(400);
      expect(over.json).toMatchObject({ id: null, error: { code: -32600 } });
      expect(over.json.error.message).toContain('server.max_batch_size');
    }
    // Only notifications: nothing is owed per element; the refusal still says why.
    const quiet = await post(url, [notification()]);
    expect(quiet.status).toBe(401);
    expect(quiet.json).toMatchObject({ id: null, error: { code: -32001 } });
    await expect(WsTestClient.open(ws.harness.wsUrl)).rejects.toThrow('HTTP 401');
    await expect(WsTestClient.open(`${ws.harness.wsUrl}/${WRONG}`)).rejects.toThrow('HTTP 401');
    expect(upstreamRequests()).toBe(0);
    expect(nodeCredits()).toBe(0);
    const logs = ws.harness.logs.join('');
    expect(logs).not.toContain(WRONG);
    expect(logs).not.toContain(KEY);
  });

  it('rate-limits failed key checks per client IP, before hashing', async () => {
    await startKeyed();
    let last = 0;
    for (let i = 0; i < 25; i++)
      last = (await post(`${ws.harness.url}/${WRONG}`, call('getSlot'))).status;
    expect(last).toBe(429);
    // The IP is held back until its bucket refills; keyed traffic from elsewhere is not.
    const answer = await post(`${ws.harness.url}/${WRONG}`, call('getSlot'));
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('403s a method the key may not call, naming it, on every door', async () => {
    await startKeyed(
      keysOf(clientKey('alpha', KEY, { allow: ['get*'], deny: ['getProgramAccounts'] })),
    );
    const at = `${ws.harness.url}/${KEY}`;
    const single = await post(at, call('getProgramAccounts', 3));
    expect(single.status).toBe(403);
    expect(single.json.error.message).toContain('getProgramAccounts');
    expect((await post(at, call('sendTransaction', 4))).status).toBe(403);
    const batch = await post(at, [call('getProgramAccounts', 1), call('getSlot', 2)]);
    expect(batch.status).toBe(200);
    expect(batch.json[0]).toMatchObject({ id: 1, error: { code: -32001 } });
    expect(batch.json[1].result).toBeTypeOf('number');
    const allRefused = await post(at, [call('getProgramAccounts', 1)]);
    expect(allRefused.status).toBe(403);
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('getProgramAccounts')).error.message).toContain('getProgramAccounts');
    socket.send([call('getProgramAccounts', 11), call('getSlot', 12)]);
    const answers = (await socket.take(() => true)) as unknown as Json[];
    expect(answers[0]!).toMatchObject({ id: 11, error: { code: -32001 } });
    expect((await socket.call('programSubscribe', ['Prog111'])).error.message).toContain(
      'programSubscribe is not allowed',
    );
    expect(answers[1]!.result).toBeTypeOf('number');
    // Only the allowed batch elements reached the node (one per batch door).
    expect(ws.harness.mocks.a!.stats().byMethod).toEqual({ getSlot: 2 });
    expect(nodeCredits()).toBe(4);
  });

  it('allows a guarded heavy read only for the listed program ids', async () => {
    const params = { getProgramAccounts: ['Tokenkeg111'] };
    await startKeyed(keysOf(clientKey('alpha', KEY, { params })));
    const at = `${ws.harness.url}/${KEY}`;
    expect((await post(at, call('getProgramAccounts', 1, ['Other111']))).status).toBe(403);
    expect((await post(at, call('getProgramAccounts', 1, []))).status).toBe(403);
    expect((await post(at, call('getProgramAccounts', 1, ['Tokenkeg111']))).status).toBe(200);
    expect(ws.harness.mocks.a!.stats().byMethod).toEqual({ getProgramAccounts: 1 });
  });

  it("429s past the key's rate with Retry-After, on HTTP and WebSocket", async () => {
    const clock = await startKeyed(keysOf(clientKey('alpha', KEY, { rpsLimit: 2 })));
    const at = `${ws.harness.url}/${KEY}`;
    expect((await post(at, call('getSlot'))).status).toBe(200);
    expect((await post(at, call('getSlot'))).status).toBe(200);
    const over = await post(at, call('getSlot', 5));
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('1');
    expect(over.json.error.message).toContain('rps_limit');
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('getSlot')).error.code).toBe(-32005);
    clock.advance(1000);
    expect((await post(at, call('getSlot'))).status).toBe(200);
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(3);
  });

  it('refuses the call that would pass the budget, naming it and the reset date', async () => {
    await startKeyed(keysOf(clientKey('alpha', KEY, { monthlyCredits: 5, resetDay: 1 })));
    const at = `${ws.harness.url}/${KEY}`;
    expect((await post(at, call('getSlot'))).status).toBe(200);
    expect((await post(at, call('getSlot'))).status).toBe(200);
    const spent = await post(at, call('getSlot', 9));
    expect(spent.status).toBe(429);
    expect(spent.json.error.message).toMatch(
      /^Key 'alpha' has spent its budget of 5 credits but 1 \(keys\.monthly_credits\), less than the 2 getSlot costs at least; it resets on \d{4}-\d{2}-01$/,
    );
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
    const batch = await post(at, [call('getSlot', 1), call('getSlot', 2)]);
    expect(batch.status).toBe(429);
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(2);
    expect(nodeCredits()).toBe(4);
    expect(ws.harness.cascade.server.keys.byName('alpha')!.used).toBe(4);
  });

  it("refuses a batch over the key's max_batch_size whole", async () => {
    await startKeyed(keysOf(clientKey('alpha', KEY, { maxBatchSize: 2 })));
    const at = `${ws.harness.url}/${KEY}`;
    const big = await post(at, [call('getSlot', 1), call('getSlot', 2), call('getSlot', 3)]);
    expect(big.status).toBe(400);
    expect(big.json.error.message).toContain('keys.max_batch_size');
    expect(upstreamRequests()).toBe(0);
  });

  it('keeps keyless calls working when keys are optional, and still 401s a wrong key', async () => {
    await startKeyed(keysOf(clientKey('alpha', KEY)), false);
    expect((await post(ws.harness.url, call('getSlot'))).status).toBe(200);
    expect((await post(`${ws.harness.url}/${WRONG}`, call('getSlot'))).status).toBe(401);
  });

  it('exports per-key series named by key, never by secret', async () => {
    await startKeyed(keysOf(clientKey('alpha', KEY, { monthlyCredits: 100, allow: ['getSlot'] })));
    const at = `${ws.harness.url}/${KEY}`;
    await post(at, call('getSlot'));
    await post(at, call('getBalance'));
    await post(`${ws.harness.url}/${WRONG}`, call('getSlot'));
    await post(ws.harness.url, call('getSlot'));
    const text = await ws.harness.metrics();
    expect(text).toContain('rpc_key_requests_total{key="alpha",outcome="allowed"} 1');
    expect(text).toContain('rpc_key_requests_total{key="alpha",outcome="method"} 1');
    expect(text).toContain('rpc_key_requests_total{key="",outcome="unknown_key"} 1');
    expect(text).toContain('rpc_key_requests_total{key="",outcome="no_key"} 1');
    expect(text).toContain('rpc_key_credits_used{key="alpha"} 2');
    expect(text).toContain('rpc_key_budget{key="alpha"} 100');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(WRONG);
  });

  it("answers CORS only for a browser key's origins, and refuses other pages' calls", async () => {
    await startKeyed(
      keysOf(clientKey('alpha', KEY, { origins: ['https://app.example'], perIpRps: 100 })),
    );
    const at = `${ws.harness.url}/${KEY}`;
    const preflight = await fetch(at, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
    const ok = await post(at, call('getSlot'), { origin: 'https://app.example' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const other = await post(at, call('getSlot'), { origin: 'https://evil.example' });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // A mistyped (or revoked) key from a page that may call here: the page reads why.
    const typo = await post(`${ws.harness.url}/${WRONG}`, call('getSlot'), {
      origin: 'https://app.example',
    });
    expect(typo.status).toBe(401);
    expect(typo.headers.get('access-control-allow-origin')).toBe('https://app.example');
    await expect(
      WsTestClient.open(`${ws.harness.wsUrl}/${KEY}`, { origin: 'https://evil.example' }),
    ).rejects.toThrow('HTTP 403');
    expect(ws.harness.mocks.a!.stats().byMethod).toEqual({ getSlot: 1 });
  });

  it("holds a connection to the key's max_subscriptions", async () => {
    await startKeyed(keysOf(clientKey('alpha', KEY, { maxSubscriptions: 1 })));
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('slotSubscribe')).result).toBeDefined();
    const over = await socket.call('rootSubscribe');
    expect(over.error.message).toContain('keys.max_subscriptions');
  });

  it('refuses a revoked key at once on open sockets and new calls', async () => {
    await startKeyed();
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('getSlot')).result).toBeTypeOf('number');
    ws.harness.cascade.server.keys.byName('alpha')!.revoked = true;
    expect((await socket.call('getSlot')).error.message).toContain('revoked');
    expect((await post(`${ws.harness.url}/${KEY}`, call('getSlot'))).status).toBe(401);
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(1);
  });

  it('closes a socket whose key is revoked (1008); a call sent before the close is never served', async () => {
    await startKeyed();
    const socket = await ws.open(`${ws.harness.wsUrl}/${KEY}`);
    expect((await socket.call('getSlot')).result).toBeTypeOf('number');
    const keys = ws.harness.cascade.server.keys;
    keys.setRevoked(keys.byName('alpha')!, true);
    // Sent before this client reads the close frame: the server reads it while closing.
    socket.send(call('getSlot', 2));
    expect(await socket.closed).toEqual({ code: 1008, reason: 'client key revoked' });
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(1);
    expect(await ws.harness.metrics()).toContain(
      'rpc_key_requests_total{key="",outcome="revoked"} 1',
    );
  });

  it('books cache hits to nobody: a key pays only for what a node served', async () => {
    const cache = {
      enabled: true,
      coalesce: true,
      maxBytes: 1 << 20,
      maxEntryBytes: 64 * 1024,
      ttlMs: 400,
      evmFinalityDepth: undefined,
      responseHeader: false,
      methods: new Map(),
    };
    await ws.start([{ name: 'a', prices: { getGenesisHash: 3 } }], {
      keys: keysOf(clientKey('alpha', KEY, { monthlyCredits: 10 })),
      server: { requireKey: true },
      cache,
    });
    const at = `${ws.harness.url}/${KEY}`;
    for (let id = 1; id <= 3; id++)
      expect((await post(at, call('getGenesisHash', id))).status).toBe(200);
    const batch = await post(at, [call('getGenesisHash', 4), call('getGenesisHash', 5)]);
    expect((batch.json as unknown as Json[]).map((one) => one.id as number)).toEqual([4, 5]);
    expect(ws.harness.mocks.a!.stats().byMethod).toEqual({ getGenesisHash: 1 });
    expect(ws.harness.cascade.server.keys.byName('alpha')!.used).toBe(3);
    // The budget check comes first: a key that cannot afford the cheapest price gets no hit either.
  });

  it('says what the budget has left only when credits_remaining_header is on', async () => {
    const keys = keysOf(clientKey('alpha', KEY, { monthlyCredits: 10 }));
    await ws.start([{ name: 'a', prices: { getSlot: 2 } }], {
      keys,
      server: { requireKey: true, creditsRemainingHeader: true },
    });
    const at = `${ws.harness.url}/${KEY}`;
    expect((await post(at, call('getSlot'))).headers.get('x-cascade-credits-remaining')).toBe('8');
    // Different params: two reads that coalescing does not merge (a coalesced one is free).
    const batch = await post(at, [
      call('getSlot', 1, [{ commitment: 'confirmed' }]),
      call('getSlot', 2, [{ commitment: 'finalized' }]),
    ]);
    expect(batch.headers.get('x-cascade-credits-remaining')).toBe('4');
    await ws.harness.close();
    await ws.start([{ name: 'a', prices: { getSlot: 2 } }], { keys, server: { requireKey: true } });
    const off = await post(`${ws.harness.url}/${KEY}`, call('getSlot'));
    expect(off.headers.get('x-cascade-credits-remaining')).toBeNull();
  });
});

describe('one keep-alive connection carrying many keys (a front proxy sharing it)', () => {
  it('judges every request by the key it carries, whatever the one before it carried', async () => {
    await startKeyed(
      keysOf(clientKey('alpha', KEY, { allow: ['getSlot'] }), clientKey('beta', BETA)),
    );
    const client = new Client(ws.harness.url, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => connections++);
    const send = async (path: string, method: string, headers: Record<string, string> = {}) => {
      const response = await client.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(call(method)),
      });
      await response.body.text();
      return response.statusCode;
    };
    // Alpha's key with its last character changed: same length, same path shape.
    const alike = `${KEY.slice(0, -1)}q`;
    try {
      const steps: Array<[string, string, Record<string, string>, number]> = [
        [`/${KEY}`, 'getSlot', {}, 200],
        [`/${KEY}`, 'getSlot', {}, 200],
        [`/${KEY}`, 'getBalance', {}, 403],
        [`/${BETA}`, 'getBalance', {}, 200],
        [`/${alike}`, 'getSlot', {}, 401],
        [`/${KEY}/send-request`, 'getSlot', {}, 200],
        [`/${KEY}`, 'getSlot', {}, 200],
        [`/`, 'getBalance', { 'x-api-key': BETA }, 200],
        [`/`, 'getSlot', {}, 401],
        [`/${KEY}`, 'getSlot', { 'x-api-key': BETA }, 200],
      ];
      for (const [path, method, headers, status] of steps)
        expect(await send(path, method, headers), `${method} on ${path}`).toBe(status);
      // A revoke reaches the connection that just passed with the key, on the same path.
      const alpha = ws.harness.cascade.server.keys.byName('alpha')!;
      ws.harness.cascade.server.keys.setRevoked(alpha, true);
      expect(await send(`/${KEY}`, 'getSlot')).toBe(401);
      ws.harness.cascade.server.keys.setRevoked(alpha, false);
      expect(await send(`/${KEY}`, 'getSlot')).toBe(200);
      expect(connections).toBe(1);
    } finally {
      await client.close();
    }
    const text = await ws.harness.metrics();
    // The path key wins over a header: the last listed step is alpha's.
    expect(text).toContain('rpc_key_requests_total{key="alpha",outcome="allowed"} 6');
    expect(text).toContain('rpc_key_requests_total{key="alpha",outcome="method"} 1');
    expect(text).toContain('rpc_key_requests_total{key="beta",outcome="allowed"} 2');
    expect(text).toContain('rpc_key_requests_total{key="",outcome="unknown_key"} 1');
    expect(text).toContain('rpc_key_requests_total{key="",outcome="no_key"} 1');
    expect(text).toContain('rpc_key_requests_total{key="",outcome="revoked"} 1');
  });
});
