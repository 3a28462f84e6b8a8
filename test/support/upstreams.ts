/**
 * Hand-written upstreams for answers the mock nodes don't give, and pointing a harness node
 * at one. Every upstream started here is closed by `closeUpstreams` (call it in afterEach).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Harness } from './proxy-harness.js';

const running: Server[] = [];

/** Starts an upstream on 127.0.0.1 and resolves with its URL. */
export async function startUpstream(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  running.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Closes every upstream started so far, stalled connections included. */
export async function closeUpstreams(): Promise<void> {
  for (const server of running.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Reloads the harness with node `name` sent to `url` instead of its mock. */
export function pointAt(h: Harness, name: string, url: string): void {
  h.server.reload({
    ...h.server.config,
    nodes: h.server.nodes().map((n) => (n.name === name ? { ...n, url, redactedUrl: url } : n)),
  });
}

/** An upstream that holds every request until the test releases it: "in flight" on cue. */
export interface HeldUpstream {
  readonly url: string;
  /** Requests received so far. */
  readonly received: number;
  /** Requests received and not answered yet (nor given up by the client). */
  readonly held: number;
  /** The most requests held at once. */
  readonly peak: number;
  /** Answers the `n` oldest held requests (every one by default). */
  release(n?: number): void;
  /** Answers every held request, and every later one at once. */
  open(): void;
}

/**
 * Starts a HeldUpstream. It answers `{"jsonrpc":"2.0","id":<the request's id>,"result":N}`,
 * N counting the requests it received. Tests use it instead of a mock's delayMs, so that
 * "still in flight" never depends on how fast the machine is.
 */
export async function startHeldUpstream(): Promise<HeldUpstream> {
  const waiting: Array<() => void> = [];
  let received = 0;
  let peak = 0;
  let opened = false;
  const url = await startUpstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const n = ++received;
      let id: unknown = null;
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? null;
      } catch {
        // not JSON: answer with a null id
      }
      const answer = (): void => {
        if (res.destroyed) return;
        const body = JSON.stringify({ jsonrpc: '2.0', id, result: n });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      };
      if (opened) return answer();
      waiting.push(answer);
      res.once('close', () => {
        const index = waiting.indexOf(answer);
        if (index !== -1) waiting.splice(index, 1);
      });
      peak = Math.max(peak, waiting.length);
    });
  });
  const release = (n = waiting.length): void => {
    for (const answer of waiting.splice(0, n)) answer();
  };
  return {
    url,
    get received() {
      return received;
    },
    get held() {
      return waiting.length;
    },
    get peak() {
      return peak;
    },
    release,
    open() {
      opened = true;
      release();
    },
  };
}
