import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** Whether some object in a (valid) JSON text repeats a member name. */
function hasDuplicateKeys(text: string): boolean {
  let i = 0;
  let dup = false;
  const space = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): void => {
    space();
    if (text[i] === '{') {
      i++;
      const seen = new Set<string>();
      space();
      if (text[i] === '}') return void i++;
      for (;;) {
        space();
        const name = str();
        if (seen.has(name)) dup = true;
        seen.add(name);
        space();
        i++; // :
        value();
        space();
        if (text[i++] === '}') return;
      }
    } else if (text[i] === '[') {
      i++;
      space();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        space();
        if (text[i++] === ']') return;
      }
    } else if (text[i] === '"') {
      str();
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    }
  };
  value();
  return dup;
}

/**
 * An upstream with a strict parser, like serde_json-based nodes (agave's jsonrpc-core): invalid
 * UTF-8 or a repeated field makes the whole body a -32700 parse error (one object, HTTP 200).
 */
function strictUpstream(seen: string[]): Promise<string> {
  return startUpstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      let text: string;
      let parsed: unknown;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        parsed = JSON.parse(text);
        if (hasDuplicateKeys(text)) throw new Error('duplicate field');
      } catch {
        seen.push(bytes.toString('latin1'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
        return;
      }
      seen.push(text);
      const list = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id?: unknown }>;
      const answers = list
        .filter((e) => 'id' in e)
        .map((e) => ({ jsonrpc: '2.0', id: e.id, result: 42 }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
    });
  });
}

/** A harness whose only node points at `url`. */
async function harnessOn(url: string): Promise<Harness> {
  const h = await startHarness([{ name: 'strict', tier: 0 }]);
  pointAt(h, 'strict', url);
  return h;
}

async function postRaw(h: Harness, body: Buffer): Promise<{ status: number; text: string }> {
  const response = await fetch(h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, text: await response.text() };
}

describe('sub-batches cut from the client bytes', () => {
  it('a duplicate "id" member in one element travels upstream with a single id', async () => {
    const seen: string[] = [];
    harness = await harnessOn(await strictUpstream(seen));
    const body = Buffer.from(
      '[{"jsonrpc":"2.0","id":1,"method":"getSlot","id":2},' +
        '{"jsonrpc":"2.0","id":3,"method":"getSlot"}]',
    );
    const { status, text } = await postRaw(harness, body);
    expect(status).toBe(200);
    // Each element travels under its sub-batch id only (the client's first id would otherwise
    // shadow it for a first-wins parser and be refused by a strict one).
    expect(seen.every((s) => !hasDuplicateKeys(s))).toBe(true);
    const answers = JSON.parse(text) as Array<{ id: unknown; result?: unknown }>;
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 2, result: 42 },
      { jsonrpc: '2.0', id: 3, result: 42 },
    ]);
    // The client's mistake is not the node's fault.
    expect((await harness.health()).nodes[0]!.status).toBe('up');
  });

  it('a batch that is not valid UTF-8 is not JSON: 400 -32700, no node dialed', async () => {
    const seen: string[] = [];
    harness = await harnessOn(await strictUpstream(seen));
    const body = Buffer.concat([
      Buffer.from('[{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"]},{"jsonrpc":"2.0","id":2,"method":"getSlot"}]'),
    ]);
    const { status, text } = await postRaw(harness, body);
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
    expect(seen).toEqual([]);
    expect((await harness.health()).nodes[0]!.status).toBe('unknown');
  });

  it('an answer repeating its "id" member reaches the client with one id, the client\'s', async () => {
    const url = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          '[{"jsonrpc":"2.0","id":5,"result":"a","id":0},{"jsonrpc":"2.0","id":1,"result":"b"}]',
        );
      });
    });
    harness = await harnessOn(url);
    const { text } = await postRaw(
      harness,
      Buffer.from(
        '[{"jsonrpc":"2.0","id":"x","method":"getSlot"},{"jsonrpc":"2.0","id":"y","method":"getSlot"}]',
      ),
    );
    // A first-wins client parser must not see the node's internal id 5.
    expect(hasDuplicateKeys(text)).toBe(false);
    expect(JSON.parse(text)).toEqual([
      { jsonrpc: '2.0', id: 'x', result: 'a' },
      { jsonrpc: '2.0', id: 'y', result: 'b' },
    ]);
  });
});
