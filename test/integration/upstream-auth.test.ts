/**
 * Providers authenticate in one of two ways besides a key in the URL: HTTP Basic credentials
 * in the URL (`https://user:pass@host/…`, Chainstack and basic-auth gateways) or a key in a
 * header (`x-api-key`). Each upstream here answers 401 unless the request carries its style.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeConfig } from '../../src/core/config/types.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":4242}';

/** An upstream that answers only requests `allowed` accepts; records what it saw. */
async function guarded(allowed: (headers: IncomingHttpHeaders) => boolean) {
  const seen: Array<{ url: string | undefined; headers: IncomingHttpHeaders }> = [];
  const url = await startUpstream((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    req.resume();
    req.on('end', () => {
      if (allowed(req.headers)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(ANSWER);
      } else {
        // What a basic-auth gateway in front of a node answers.
        res.writeHead(401, {
          'content-type': 'text/plain',
          'www-authenticate': 'Basic realm="rpc"',
        });
        res.end('Unauthorized');
      }
    });
  });
  return { url, seen };
}

/** Reloads node `n` with `patch` (URL, headers). */
function reconfigure(h: Harness, patch: Partial<NodeConfig>): void {
  h.server.reload({
    ...h.server.config,
    nodes: h.server.nodes().map((node) => ({ ...node, ...patch })),
  });
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('credentials in the node URL', () => {
  it('are sent as HTTP Basic auth, percent-decoded, and never in the request line', async () => {
    const expected = basic('user', 'p@ss wörd');
    const upstream = await guarded((headers) => headers.authorization === expected);
    const h = (harness = await startHarness([{ name: 'n' }]));
    const origin = new URL(upstream.url);
    reconfigure(h, { url: `http://user:p%40ss%20w%C3%B6rd@${origin.host}/rpc/v1?x=1` });
    const answer = await h.post(rpc('getSlot'));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(ANSWER);
    expect(upstream.seen[0]!.url).toBe('/rpc/v1?x=1');
    expect(upstream.seen[0]!.headers.host).toBe(origin.host);
    expect((await h.health()).nodes[0]!.status).toBe('up');
  });

  it('a username alone (a key as the user) is sent with an empty password', async () => {
    const upstream = await guarded((headers) => headers.authorization === basic('KEY123', ''));
    const h = (harness = await startHarness([{ name: 'n' }]));
    reconfigure(h, { url: `http://KEY123@${new URL(upstream.url).host}/` });
    expect((await h.post(rpc('getSlot'))).status).toBe(200);
  });

  it('without them the same upstream refuses (401) and the node is penalized', async () => {
    const upstream = await guarded((headers) => headers.authorization !== undefined);
    const h = (harness = await startHarness([{ name: 'n' }]));
    reconfigure(h, { url: upstream.url });
    expect((await h.post(rpc('getSlot'))).status).toBe(502);
    expect((await h.health()).nodes[0]!.status).toBe('down');
  });
});

describe('per-node headers', () => {
  it('are sent on every request, with the client’s tracing headers', async () => {
    const upstream = await guarded((headers) => headers['x-api-key'] === 'k-123');
    const h = (harness = await startHarness([{ name: 'n' }]));
    reconfigure(h, { url: upstream.url, headers: { 'x-api-key': 'k-123', 'x-tenant': 't1' } });
    for (let i = 0; i < 3; i++) {
      const response = await fetch(h.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
        },
        body: JSON.stringify(rpc('getSlot')),
      });
      expect(response.status).toBe(200);
    }
    expect(upstream.seen).toHaveLength(3);
    for (const { headers } of upstream.seen) {
      expect(headers['x-tenant']).toBe('t1');
      expect(headers['content-type']).toBe('application/json');
      expect(headers.traceparent).toMatch(/^00-a{32}-/);
    }
  });

  it('a reload that changes a header value takes effect at once', async () => {
    const upstream = await guarded((headers) => headers['x-api-key'] === 'new-key');
    const h = (harness = await startHarness([{ name: 'n' }]));
    reconfigure(h, { url: upstream.url, headers: { 'x-api-key': 'old-key' } });
    expect((await h.post(rpc('getSlot'))).status).toBe(502);
    reconfigure(h, { headers: { 'x-api-key': 'new-key' } });
    expect((await h.post(rpc('getSlot'))).status).toBe(200);
  });

  it('a client cannot send its own value for them', async () => {
    const upstream = await guarded((headers) => headers['x-api-key'] === 'k-123');
    const h = (harness = await startHarness([{ name: 'n' }]));
    reconfigure(h, { url: upstream.url, headers: { 'x-api-key': 'k-123' } });
    const response = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'client-value' },
      body: JSON.stringify(rpc('getSlot')),
    });
    expect(response.status).toBe(200);
    expect(upstream.seen[0]!.headers['x-api-key']).toBe('k-123');
  });
});
