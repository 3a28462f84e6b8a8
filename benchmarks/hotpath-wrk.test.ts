import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWrk, writeWrkScript } from './hotpath-wrk.js';

const hasWrk = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x"]}';

/** What a wrk run sent: each distinct header-name order, and each distinct body and path. */
interface Seen {
  orders: Set<string>;
  bodies: Set<string>;
  paths: Set<string>;
}

describe.skipIf(!hasWrk)(
  `wrk as the hot-path load${hasWrk ? '' : ' (skipped: wrk is not installed)'}`,
  () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wrk-script-'));
    const seen: Seen = { orders: new Set(), bodies: new Set(), paths: new Set() };
    let server: Server;
    let url: string;

    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.orders.add(req.rawHeaders.filter((_, i) => i % 2 === 0).join(','));
        seen.paths.add(req.url ?? '');
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          seen.bodies.add(Buffer.concat(chunks).toString('utf8'));
          res.setHeader('content-type', 'application/json');
          res.end('{"jsonrpc":"2.0","id":1,"result":0}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/some-key`;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    });

    it('sends the same request bytes, Host first, from one wrk run to the next', async () => {
      const script = writeWrkScript(dir, BODY);
      // wrk's own request formatting orders headers differently from one process to the next;
      // several runs in a row would have shown more than one order.
      for (let run = 0; run < 4; run++) {
        const result = await runWrk({ url, body: BODY, connections: 2, durationS: 1 }, script);
        expect(result.requests).toBeGreaterThan(0);
        expect(result.errors).toBe(0);
      }
      expect([...seen.orders]).toEqual(['Host,Content-Length,content-type']);
      expect([...seen.bodies]).toEqual([BODY]);
      expect([...seen.paths]).toEqual(['/some-key']);
    });
  },
);
