import { describe, expect, it } from 'vitest';
import { RequestOutcome } from '../metrics.js';
import { UpstreamStream, type UpstreamControl } from '../node/upstream-stream.js';
import { ERROR_MESSAGE, WRITE_UNCONFIRMED_MESSAGE } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import {
  ALL_FAILED,
  INTERNAL_ERROR,
  TIMED_OUT,
  WRITE_UNCONFIRMED,
  batchAnswerOf,
  elementJson,
  failureOf,
  outcomeOf,
  unansweredJson,
  unfitForMessage,
} from './route-answer.js';
import type { RouteResult } from './route-context.js';

const IDLE: UpstreamControl = { pause() {}, resume() {}, abort() {} };

function answer(body: Buffer | UpstreamStream, status = 200): RouteResult {
  return {
    kind: 'answer',
    status,
    contentType: 'application/json',
    body,
    node: 'a',
    attempts: 1,
    credits: 1,
  };
}

const OK = Buffer.from('{"jsonrpc":"2.0","id":7,"result":1}');

describe('failureOf / outcomeOf: a single route result', () => {
  it('relays an answer, whatever its status: the client gets what the node said', () => {
    expect(failureOf(answer(OK))).toBeUndefined();
    expect(failureOf(answer(Buffer.from('<html>busy</html>'), 503))).toBeUndefined();
    expect(outcomeOf(answer(OK))).toBe(RequestOutcome.forwarded);
  });

  it('relays a stream still arriving, and answers 502 for one that broke before the client', () => {
    const healthy = new UpstreamStream(IDLE, Buffer.from('{"result":'));
    const broken = new UpstreamStream(IDLE, Buffer.from('{"result":'));
    broken.fail(new Error('upstream body broke'));
    try {
      expect(failureOf(answer(healthy))).toBeUndefined();
      expect(failureOf(answer(broken))).toBe(ALL_FAILED);
      expect(outcomeOf(answer(broken))).toBe(RequestOutcome.badGateway);
    } finally {
      healthy.abort(new Error('test over'));
    }
  });

  it('maps every way routing fails to its status, error and outcome', () => {
    const ended = { attempts: 2, credits: 3 };
    expect(failureOf({ kind: 'timeout', ...ended })).toBe(TIMED_OUT);
    expect(TIMED_OUT).toMatchObject({ status: 504, code: -32000, outcome: RequestOutcome.timeout });
    expect(TIMED_OUT.message).toBe(ERROR_MESSAGE.globalTimeout);
    expect(failureOf({ kind: 'exhausted', ...ended })).toBe(ALL_FAILED);
    expect(ALL_FAILED).toMatchObject({ status: 502, outcome: RequestOutcome.badGateway });
    expect(failureOf({ kind: 'exhausted', unsure: true, ...ended })).toBe(WRITE_UNCONFIRMED);
    expect(WRITE_UNCONFIRMED.message).toBe(WRITE_UNCONFIRMED_MESSAGE);
    expect(failureOf({ kind: 'failed', error: new Error('bug'), ...ended })).toBe(INTERNAL_ERROR);
    expect(INTERNAL_ERROR).toMatchObject({ status: 500, code: -32603 });
  });
});

describe('unfitForMessage: answers carried as JSON-RPC messages', () => {
  it('carries objects and arrays as a message, objects only as a batch element', () => {
    expect(unfitForMessage(200, OK, false)).toBeUndefined();
    expect(unfitForMessage(200, Buffer.from(' [1]'), false)).toBeUndefined();
    expect(unfitForMessage(200, Buffer.from('[1]'), true)).toMatchObject({ status: 502 });
    expect(unfitForMessage(200, OK, true)).toBeUndefined();
  });

  it("carries a notification's empty 2xx, and turns an error page into cascade's error", () => {
    expect(unfitForMessage(204, Buffer.alloc(0), false)).toBeUndefined();
    const page = unfitForMessage(503, Buffer.from('<html>busy</html>'), false);
    expect(page).toMatchObject({ status: 502, code: -32000, outcome: RequestOutcome.badGateway });
    expect(page?.message).toBe('Upstream answered HTTP 503 without a JSON-RPC body');
  });
});

describe('elementJson and unansweredJson: texts inside a batch array', () => {
  it("keeps an upstream's object byte for byte and gives failures the client's id", () => {
    expect(elementJson(answer(OK), '"x"')).toBe(OK.toString());
    const timedOut = JSON.parse(elementJson({ kind: 'timeout', attempts: 1, credits: 0 }, '"x"'));
    expect(timedOut).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: ERROR_MESSAGE.globalTimeout },
      id: 'x',
    });
    const unsure = { kind: 'exhausted', unsure: true, attempts: 1, credits: 1 } as const;
    expect(JSON.parse(elementJson(unsure, '3')).error.message).toBe(WRITE_UNCONFIRMED_MESSAGE);
    const page = elementJson(answer(Buffer.from('bad gateway'), 502), '4');
    expect(JSON.parse(page)).toMatchObject({ error: { code: -32000 }, id: 4 });
  });

  it('rethrows a routing bug instead of hiding it in the array', () => {
    const bug = new Error('bug');
    expect(() => elementJson({ kind: 'failed', error: bug, attempts: 0, credits: 0 }, '1')).toThrow(
      bug,
    );
  });

  it('says timed out or all failed for an element no node answered', () => {
    expect(JSON.parse(unansweredJson(true, '1')).error.message).toBe(ERROR_MESSAGE.globalTimeout);
    expect(JSON.parse(unansweredJson(false, '1')).error.message).toBe(ERROR_MESSAGE.allFailed);
  });
});

describe('batchAnswerOf: a batch answer and its outcome', () => {
  const valid = { method: 'getSlot', methodId: 1, idJson: '1' } as unknown as BatchElement;
  const invalid = { method: undefined, methodId: 0, idJson: 'null' } as unknown as BatchElement;
  const routed = (forwarded: boolean, timedOut = false, body = '[{}]') => ({
    body,
    forwarded,
    timedOut,
  });

  it('answers 200 with the array when a node (or the cache) answered an element', () => {
    expect(batchAnswerOf(routed(true), [valid, invalid])).toEqual({
      status: 200,
      body: '[{}]',
      outcome: RequestOutcome.forwarded,
    });
  });

  it('counts a batch of nothing but invalid elements as a bad request, not a failure', () => {
    expect(batchAnswerOf(routed(false), [invalid, invalid]).outcome).toBe(
      RequestOutcome.badRequest,
    );
  });

  it('counts a batch no node answered as a timeout or a bad gateway', () => {
    expect(batchAnswerOf(routed(false, true), [valid, invalid]).outcome).toBe(
      RequestOutcome.timeout,
    );
    expect(batchAnswerOf(routed(false), [valid]).outcome).toBe(RequestOutcome.badGateway);
  });

  it('owes nothing for only notifications: 204, no body', () => {
    expect(batchAnswerOf(routed(true, false, ''), [valid])).toMatchObject({
      status: 204,
      body: '',
    });
  });
});
