/**
 * The two ends of a large-answer measurement: an upstream that answers getProgramAccounts
 * with any number of bytes of result-first JSON (written as the socket takes them), and a
 * client that counts the bytes it gets without keeping them. Used by `npm run
 * bench:big-answer` and by the end-to-end memory test.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';

const CHUNK = Buffer.alloc(64 * 1024, 'a');
const HEAD = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"');
const TAIL = Buffer.from('"}');

/** The request both ends use. */
export const PROGRAM_ACCOUNTS_REQUEST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'getProgramAccounts',
  params: ['x'],
});

/** A local HTTP upstream of a benchmark: `server` listens on 127.0.0.1, port 0. */
export abstract class LoopbackUpstream {
  abstract readonly server: Server;

  /** Listens on 127.0.0.1; resolves with the URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** An upstream answering `size` bytes (settable between requests); notes its last byte. */
export class BigAnswerUpstream extends LoopbackUpstream {
  size = 4096;
  /** performance.now() when the last answer's last byte was handed to the socket. */
  lastByteAt = 0;
  readonly server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      let left = this.size - HEAD.length - TAIL.length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(HEAD);
      const pump = (): void => {
        while (left > 0) {
          const part = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
          left -= part.length;
          if (!res.write(part)) return void res.once('drain', pump);
        }
        res.end(TAIL, () => (this.lastByteAt = performance.now()));
      };
      pump();
    });
  });
}

/** POSTs the request and counts the answer's bytes; notes when the first one arrived. */
export function fetchLength(
  url: string,
): Promise<{ status: number; length: number; firstByteAt: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let length = 0;
        let firstByteAt = 0;
        res.on('data', (chunk: Buffer) => {
          if (length === 0) firstByteAt = performance.now();
          length += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, length, firstByteAt }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(PROGRAM_ACCOUNTS_REQUEST);
  });
}
