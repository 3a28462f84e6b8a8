import type { Span } from '../protocol/json-spans.js';
import { spliceSpan } from '../protocol/json-spans.js';
import type { MethodPolicy } from './cache-policy.js';

/** An answer several clients may get: the upstream's bytes and where its `id` sits. */
export interface SharedAnswer {
  readonly body: Buffer;
  readonly idSpan: Span;
  readonly contentType: string;
}

/** A request waiting on an identical one in flight. */
export interface FlightWaiter {
  /** The shared answer, or undefined when the leader got none: route on your own then. */
  landed(answer: SharedAnswer | undefined): void;
}

/** One request in flight that identical requests wait on (or, uncoalesced, just its key). */
export class Flight {
  readonly waiters: FlightWaiter[] = [];

  constructor(
    readonly key: string,
    readonly policy: MethodPolicy,
    /** Canonical params ('' when none). */
    readonly params: string,
  ) {}
}

/** `answer` with `idText` (the client's exact id bytes) in place of the upstream's id. */
export function withClientId(answer: SharedAnswer, idText: string): Buffer {
  const body = answer.body;
  return spliceSpan(body, { start: 0, end: body.length }, answer.idSpan, idText);
}
