/** What a node's transport hands the router for one attempt (http-transport.ts makes them). */
import type { UpstreamStream } from './upstream-stream.js';

/** What one attempt produced. */
export type AttemptResponse =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly retryAfter: string | undefined;
      readonly body: Buffer;
    }
  /** A large successful answer being relayed: the caller must pipe or abort `stream`. */
  | {
      readonly kind: 'stream';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly stream: UpstreamStream;
    }
  /** No usable response: connect/DNS/TLS failure, reset, or the deadline before headers. */
  | {
      readonly kind: 'transport_error';
      readonly reason: string;
      readonly timedOut: boolean;
      /** False when the request was never written to a connection (the node never saw it). */
      readonly sent: boolean;
    }
  /** Headers arrived but the body did not (deadline, reset, or over the size cap). */
  | { readonly kind: 'body_error'; readonly reason: string; readonly timedOut: boolean };

/** A sent attempt's handle: cancelling settles it at once and aborts the request. */
export interface AttemptControl {
  /** Gives the attempt up (a hedge race was decided); a no-op once it settled. */
  cancel(): void;
}

/** Receives an attempt's response, with the caller's token (so it need not be a closure). */
export type AttemptCallback<T> = (response: AttemptResponse, token: T) => void;

/** Extra request headers copied from the client (already lower-case). */
export type ForwardHeaders = Record<string, string> | undefined;
