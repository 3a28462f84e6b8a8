/**
 * One upstream subscription shared by every client that asked for the same (family, method,
 * canonical params). cascade issues the id clients see — an integer for Solana, 0x-hex for EVM
 * — and keeps it across failovers; a client holding the same subscription twice gets a second
 * id. Each upstream notification is filtered once (stream-filter.ts), framed once for the
 * shared id, and the same bytes go to every client.
 */
import type { StreamFilter } from './stream-filter.js';
import type { SubscribeMethod } from './subscription-methods.js';
import type { UpstreamSocket } from './upstream-socket.js';

/** A client connection as subscriptions see it. */
export interface Subscriber {
  /** Sends one message; false when the client is gone (or was just closed as too slow). */
  send(data: Buffer | string): boolean;
  /** The client's subscription ids (JSON text) → subscriptions. */
  readonly subscriptions: Map<string, SharedSubscription>;
  /** Subscribe calls of this client still waiting for their upstream answer. */
  pendingSubscribes: number;
  /** Closes the client socket with `code` (1013: no node can serve; 1012: shutting down). */
  close(code: number, reason: string): void;
}

/** A subscribe call waiting for the upstream subscription. */
export interface PendingSubscribe {
  readonly subscriber: Subscriber;
  readonly requestIdJson: string;
}

/** The shared subscription's lifecycle. */
export type SharedState = 'placing' | 'active' | 'moving' | 'ended';

export class SharedSubscription {
  readonly clients = new Map<Subscriber, string[]>();
  readonly pending: PendingSubscribe[] = [];
  state: SharedState = 'placing';
  socket: UpstreamSocket<SharedSubscription> | undefined = undefined;
  /** The node's id for it on `socket` (JSON text). */
  upstreamKey: string | undefined = undefined;
  /** Notifications that arrived while a gap fill ran, delivered after it. */
  held: Array<{ readonly bytes: Buffer; readonly parsed: unknown }> | undefined = undefined;
  /** evmLogs: the head when the subscription began (where a gap starts if no log came yet). */
  anchor: number | undefined = undefined;
  /** account: the value last sent (a gap fill sends the account only if it changed). */
  lastValue: string | undefined = undefined;
  readonly #head: Buffer;
  readonly #tail: Buffer;

  constructor(
    readonly key: string,
    readonly spec: SubscribeMethod,
    readonly paramsJson: string,
    readonly params: readonly unknown[],
    /** The id clients see, as JSON text (`7` or `"0x…"`). */
    readonly idJson: string,
    readonly filter: StreamFilter,
    /** Where notification messages sent to clients are counted. */
    private readonly tally: { delivered: number },
  ) {
    [this.#head, this.#tail] = frame(spec, idJson);
  }

  /** True once it is over (read after awaits, where a narrowed `state` would mislead). */
  get ended(): boolean {
    return this.state === 'ended';
  }

  /** Client attachments (a client holding it twice counts twice). */
  get size(): number {
    let count = 0;
    for (const ids of this.clients.values()) count += ids.length;
    return count;
  }

  /** The id a new attachment of `subscriber` gets: the shared one, or its own second id. */
  attach(subscriber: Subscriber, idJson: string): void {
    const ids = this.clients.get(subscriber);
    if (ids) ids.push(idJson);
    else this.clients.set(subscriber, [idJson]);
    subscriber.subscriptions.set(idJson, this);
  }

  /** Removes one attachment; true when it existed. */
  detach(subscriber: Subscriber, idJson: string): boolean {
    const ids = this.clients.get(subscriber);
    const at = ids?.indexOf(idJson) ?? -1;
    if (ids === undefined || at === -1) return false;
    ids.splice(at, 1);
    if (ids.length === 0) this.clients.delete(subscriber);
    subscriber.subscriptions.delete(idJson);
    return true;
  }

  /**
   * Sends a notification `result` (bytes as the node wrote them) to every client it admits.
   * While a gap fill runs, live notifications wait (`held`); the fill's own go out `now`.
   */
  deliver(bytes: Buffer, parsed: unknown, now = false): void {
    if (this.held !== undefined && !now) {
      this.held.push({ bytes, parsed });
      return;
    }
    if (!this.filter.admit(parsed)) return;
    if (this.spec.kind === 'account')
      this.lastValue = JSON.stringify((parsed as { value?: unknown })?.value);
    const shared = Buffer.concat([this.#head, bytes, this.#tail]);
    for (const [subscriber, ids] of [...this.clients]) {
      for (const id of ids) {
        if (id === this.idJson) subscriber.send(shared);
        else {
          const [head, tail] = frame(this.spec, id);
          subscriber.send(Buffer.concat([head, bytes, tail]));
        }
        this.tally.delivered++;
      }
    }
  }

  /** Ends a gap fill: what arrived meanwhile goes out, in order, through the filter. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const { bytes, parsed } of held) this.deliver(bytes, parsed);
  }
}

/** The bytes around a notification's result for client id `idJson`, as nodes write them. */
function frame(spec: SubscribeMethod, idJson: string): [Buffer, Buffer] {
  if (spec.family === 'solana') {
    return [
      Buffer.from(`{"jsonrpc":"2.0","method":"${spec.notification}","params":{"result":`),
      Buffer.from(`,"subscription":${idJson}}}`),
    ];
  }
  return [
    Buffer.from(
      `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":${idJson},"result":`,
    ),
    Buffer.from('}}'),
  ];
}
