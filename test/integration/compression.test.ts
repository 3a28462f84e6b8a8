/**
 * gzip for big answers: the bytes a client decompresses are exactly the upstream's answer,
 * buffered or streamed; clients that do not ask (or refuse gzip) get identity; small answers
 * and cascade's own errors are never compressed; a client that leaves a compressed stream
 * still aborts the upstream and frees the node's permit.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../src/core/config/types.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** A getProgramAccounts-like answer of about `bytes`: accounts with varied base64 data. */
function programAccounts(bytes: number, id = 1): Buffer {
  const entries: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const data = randomBytes(96).toString('base64');
    const entry = `{"account":{"data":["${data}","base64"],"executable":false,"lamports":${2_039_280 + i},"owner":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","rentEpoch":18446744073709551615,"space":165},"pubkey":"${randomBytes(32).toString('base64')}"}`;
    entries.push(entry);
    size += entry.length + 1;
  }
  return Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":[${entries.join(',')}]}`);
}

/** An upstream that answers every request with `body`. */
function answering(body: Buffer): Promise<string> {
  return startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
}

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The bytes on the wire (not decompressed). */
  readonly bytes: Buffer;
}

/** POSTs `body` and collects the raw answer (node:http never decompresses). */
function post(url: string, body: unknown, acceptEncoding?: string): Promise<Raw> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

async function proxyFor(body: Buffer, server: Partial<ServerConfig> = {}): Promise<Harness> {
  const h = (harness = await startHarness([{ name: 'n' }], { server }));
  pointAt(h, 'n', await answering(body));
  return h;
}

const varyOf = (raw: Raw): string => String(raw.headers.vary ?? '');

describe('gzip for clients that ask', () => {
  it('a buffered answer decompresses to exactly the upstream’s bytes', async () => {
    const answer = programAccounts(30_000);
    const h = await proxyFor(answer);
    const raw = await post(h.url, rpc('getProgramAccounts'), 'gzip, deflate, br');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(varyOf(raw)).toContain('Accept-Encoding');
    expect(Number(raw.headers['content-length'])).toBe(raw.bytes.length);
    expect(raw.bytes.length).toBeLessThan(answer.length);
    expect(gunzipSync(raw.bytes).equals(answer)).toBe(true);
  });

  it('a streamed 20 MB answer decompresses to exactly the upstream’s bytes', async () => {
    const answer = programAccounts(20 * 1024 * 1024);
    const h = await proxyFor(answer);
    const raw = await post(h.url, rpc('getProgramAccounts'), 'gzip');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers['transfer-encoding']).toBe('chunked');
    expect(raw.bytes.length).toBeLessThan(answer.length);
    expect(gunzipSync(raw.bytes).equals(answer)).toBe(true);
  });

  it('a big batch answer is compressed too', async () => {
    const h = (harness = await startHarness([{ name: 'n', mock: { responseBytes: 4000 } }]));
    const batch = [1, 2, 3].map((id) =>
      rpc('getProgramAccounts', id, ['11111111111111111111111111111111']),
    );
    const plain = await post(h.url, batch);
    const gzipped = await post(h.url, batch, 'gzip');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    const ids = (bytes: Buffer) =>
      (JSON.parse(bytes.toString()) as Array<{ id: number }>).map((e) => e.id);
    expect(ids(gunzipSync(gzipped.bytes))).toEqual([1, 2, 3]);
    expect(gunzipSync(gzipped.bytes).length).toBe(plain.bytes.length);
  });

  it.each(['gzip;q=1.0, identity;q=0.5', '*', 'br, gzip;q=0.8', 'GZIP'])(
    'counts "%s" as asking for gzip',
    async (header) => {
      const h = await proxyFor(programAccounts(5000));
      expect(
        (await post(h.url, rpc('getProgramAccounts'), header)).headers['content-encoding'],
      ).toBe('gzip');
    },
  );
});

describe('identity', () => {
  it('when the client does not ask: the upstream’s bytes as they came', async () => {
    const answer = programAccounts(30_000);
    const h = await proxyFor(answer);
    const raw = await post(h.url, rpc('getProgramAccounts'));
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(varyOf(raw)).toContain('Accept-Encoding');
    expect(raw.bytes.equals(answer)).toBe(true);
  });

  it.each(['gzip;q=0', 'identity', 'br', 'deflate', '*;q=0, identity'])(
    'when Accept-Encoding is "%s"',
    async (header) => {
      const answer = programAccounts(5000);
      const h = await proxyFor(answer);
      const raw = await post(h.url, rpc('getProgramAccounts'), header);
      expect(raw.headers['content-encoding']).toBeUndefined();
      expect(raw.bytes.equals(answer)).toBe(true);
    },
  );

  it('for answers below compression_min_bytes, with no Vary for it', async () => {
    const answer = Buffer.from(
      '{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1},"value":5}}',
    );
    const h = await proxyFor(answer);
    const raw = await post(h.url, rpc('getBalance'), 'gzip');
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(varyOf(raw)).not.toContain('Accept-Encoding');
    expect(raw.bytes.equals(answer)).toBe(true);
  });

  it('for every answer when compression_min_bytes = 0', async () => {
    const answer = programAccounts(200 * 1024);
    const h = await proxyFor(answer, { compressionMinBytes: 0 });
    const raw = await post(h.url, rpc('getProgramAccounts'), 'gzip');
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.bytes.equals(answer)).toBe(true);
  });

  it('for cascade’s own errors', async () => {
    const h = await proxyFor(programAccounts(5000), { compressionMinBytes: 1 });
    const raw = await post(h.url, '{"jsonrpc":', 'gzip');
    expect(raw.status).toBe(400);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(raw.bytes.toString())).toMatchObject({ error: { code: -32700 } });
  });
});

describe('a client that leaves a compressed stream', () => {
  it('aborts the upstream request and frees the node’s permit', async () => {
    let upstreamClosed = false;
    const url = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // A result-first head well past the stream threshold, then nothing more: only the
        // client leaving can end this answer.
        res.write(programAccounts(256 * 1024).subarray(0, 200 * 1024));
        res.on('close', () => (upstreamClosed = true));
      });
    });
    const h = (harness = await startHarness([{ name: 'n' }], {
      budgetMs: 30_000,
      attemptTimeoutMs: 20_000,
    }));
    pointAt(h, 'n', url);
    const node = h.server.topology.node('n')!;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        h.url,
        { method: 'POST', headers: { 'accept-encoding': 'gzip' } },
        (res) => {
          expect(res.headers['content-encoding']).toBe('gzip');
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      req.end(JSON.stringify(rpc('getProgramAccounts')), () => undefined);
      setTimeout(() => reject(new Error('no compressed bytes arrived')), 10_000).unref();
    });
    await expect.poll(() => upstreamClosed).toBe(true);
    await expect.poll(() => node.permits.inFlight).toBe(0);
    expect((await h.health()).nodes[0]!.status).not.toBe('down');
  });
});
