/**
 * A simulated network path. An accepted TCP socket is held for one RTT (the handshake a client
 * pays on a new connection), then handed to the HTTP/TLS layer wrapped in a DelayedSocket
 * whose bytes arrive RTT/2 after the client sent them and leave RTT/2 after the server wrote
 * them. Each flight of a protocol therefore costs one RTT: plain HTTP on a fresh connection
 * 2 RTT, on a reused one 1 RTT; TLS 1.3 adds one more on a fresh connection.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';

/** One side of the simulated path, as a socket-like stream for node:http / node:tls. */
export class DelayedSocket extends Duplex {
  readonly #raw: Socket;
  readonly #halfMs: number;

  constructor(raw: Socket, rttMs: number) {
    super({ allowHalfOpen: true });
    this.#raw = raw;
    this.#halfMs = rttMs / 2;
    raw.on('data', (chunk: Buffer) => this.#later(() => this.#deliver(chunk)));
    raw.on('end', () => this.#later(() => this.#deliver(null)));
    raw.on('timeout', () => this.emit('timeout'));
    raw.on('error', (err) => this.destroy(err));
    raw.on('close', () => this.#later(() => this.destroy()));
  }

  #later(fn: () => void): void {
    setTimeout(fn, this.#halfMs);
  }

  #deliver(chunk: Buffer | null): void {
    if (this.destroyed) return;
    if (!this.push(chunk) && chunk !== null) this.#raw.pause();
  }

  override _read(): void {
    this.#raw.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    // Accept at once (the bytes are "on the wire"); they reach the client half an RTT later.
    this.#later(() => {
      if (!this.#raw.destroyed) this.#raw.write(chunk);
    });
    callback();
  }

  override _final(callback: () => void): void {
    this.#later(() => this.#raw.end());
    callback();
  }

  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    // Bytes already written are still in flight; the reset follows them.
    this.#later(() => this.#raw.destroy());
    callback(err);
  }

  /** node:http arms idle timeouts through this. */
  setTimeout(ms: number, callback?: () => void): this {
    this.#raw.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.#raw.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, delayMs?: number): this {
    this.#raw.setKeepAlive(enable, delayMs);
    return this;
  }

  get remoteAddress(): string | undefined {
    return this.#raw.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.#raw.remotePort;
  }

  get remoteFamily(): string | undefined {
    return this.#raw.remoteFamily;
  }

  get localAddress(): string | undefined {
    return this.#raw.localAddress;
  }

  get localPort(): number | undefined {
    return this.#raw.localPort;
  }
}

/** Holds `raw` for one RTT (the TCP handshake), then hands it over wrapped. */
export function handOverAfterRtt(
  raw: Socket,
  rttMs: number,
  handOver: (socket: DelayedSocket) => void,
): void {
  raw.pause();
  // A client may reset during the handshake wait; without a listener that would crash.
  raw.on('error', () => raw.destroy());
  setTimeout(() => {
    if (!raw.destroyed) handOver(new DelayedSocket(raw, rttMs));
  }, rttMs);
}
