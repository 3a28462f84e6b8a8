import WebSocket from 'ws';

/** A JSON message as a test reads it. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A raw WebSocket client that queues what it receives, for tests (no timing: it waits on events). */
export class WsTestClient {
  readonly messages: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: Array<() => void> = [];
  #nextId = 1;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.messages.push(JSON.parse(data.toString()) as Json);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    ws.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        for (const wake of this.#waiters.splice(0)) wake();
      }),
    );
  }

  /** Connects; rejects with the HTTP status when the upgrade is refused. */
  static open(url: string, options: WebSocket.ClientOptions = {}): Promise<WsTestClient> {
    const ws = new WebSocket(url, options);
    const client = new WsTestClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Sends a call with the next id and resolves with its answer (other messages stay queued). */
  async call(method: string, params?: unknown): Promise<Json> {
    const id = this.#nextId++;
    this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return this.take((m) => m.id === id && !('method' in m));
  }

  /** Resolves with (and removes) the first message matching `match`, waiting for it. */
  async take(match: (message: Json) => boolean): Promise<Json> {
    for (;;) {
      const at = this.messages.findIndex(match);
      if (at !== -1) return this.messages.splice(at, 1)[0]!;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('socket closed while waiting');
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves with the next `count` notifications for subscription `id`. */
  async notifications(id: unknown, count: number): Promise<Json[]> {
    const out: Json[] = [];
    while (out.length < count) {
      out.push(await this.take((m) => m.params?.subscription === id));
    }
    return out;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Waits for `condition`, checking every few ms (a wait for an event, not a timing assert). */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
