import { describe, expect, it } from 'vitest';
import type { BatchElement } from '../protocol/rpc-request.js';
import { ATTEMPT_OUTCOMES } from '../metrics.js';
import {
  REFUSED_BATCH,
  readSubBatchAnswer,
  subBatchBody,
  type ElementProgress,
} from './batch-answer.js';

function progress(value: Record<string, unknown>): ElementProgress {
  const element: BatchElement = {
    method: value.method as string,
    methodId: -1,
    idJson: 'id' in value ? JSON.stringify(value.id) : undefined,
    value,
  };
  return { element, answer: undefined, done: false };
}

const body = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('subBatchBody', () => {
  it('sends one element as a plain request under id 0', () => {
    expect(
      subBatchBody([progress({ jsonrpc: '2.0', id: 'x', method: 'getSlot' })]).toString(),
    ).toBe('{"jsonrpc":"2.0","id":0,"method":"getSlot"}');
  });

  it('sends several as an array under ids 0..n-1, notifications untouched', () => {
    const text = subBatchBody([
      progress({ id: 7, method: 'a' }),
      progress({ method: 'b' }),
      progress({ id: 7, method: 'c' }),
    ]).toString();
    expect(JSON.parse(text)).toEqual([
      { id: 0, method: 'a' },
      { method: 'b' },
      { id: 2, method: 'c' },
    ]);
  });
});

describe('readSubBatchAnswer', () => {
  it('maps answers back to the client ids, whatever their order', () => {
    const elements = [progress({ id: 'a', method: 'x' }), progress({ id: 'b', method: 'y' })];
    const verdict = readSubBatchAnswer(
      200,
      body([
        { id: 1, result: 2 },
        { id: 0, result: 1 },
      ]),
      elements,
    );
    expect(verdict.kind).toBe('success');
    // The node's own bytes, only the id swapped back.
    expect(elements.map((e) => e.answer)).toEqual([
      '{"id":"a","result":1}',
      '{"id":"b","result":2}',
    ]);
  });

  it('retries only elements with server errors or missing answers', () => {
    const elements = [
      progress({ id: 1, method: 'x' }),
      progress({ id: 2, method: 'y' }),
      progress({ id: 3, method: 'z' }),
    ];
    const verdict = readSubBatchAnswer(
      200,
      body([
        { id: 0, result: 1 },
        { id: 1, error: { code: -32005, message: 'busy' } },
      ]),
      elements,
    );
    expect(verdict.kind).toBe('retry');
    expect(ATTEMPT_OUTCOMES[verdict.outcome]).toBe('invalid_json');
    expect(elements.map((e) => e.done)).toEqual([true, false, false]);
  });

  it('returns the client id as the exact JSON text it arrived as', () => {
    const element = progress({ id: 'x', method: 'x' });
    const withBigId = {
      ...element,
      element: { ...element.element, idJson: '12345678901234567890' },
    };
    readSubBatchAnswer(200, body({ id: 0, result: 1 }), [withBigId]);
    expect(withBigId.answer).toBe('{"id":12345678901234567890,"result":1}');
  });

  it("passes the node's answers through byte for byte: numbers beyond 2^53, spelling, order", () => {
    const elements = [progress({ id: 'a', method: 'x' }), progress({ id: 'b', method: 'y' })];
    const answer =
      '[ {"jsonrpc":"2.0","result":{"value":18446744073709551615,"f":1.50},"id":0},\n' +
      '  {"id" : 1 , "result":"caf\\u00e9"} ]';
    expect(readSubBatchAnswer(200, Buffer.from(answer), elements).kind).toBe('success');
    expect(elements.map((e) => e.answer)).toEqual([
      '{"jsonrpc":"2.0","result":{"value":18446744073709551615,"f":1.50},"id":"a"}',
      '{"id" : "b" , "result":"caf\\u00e9"}',
    ]);
  });

  it('adds the client id to an answer that came without one', () => {
    const element = progress({ id: 'q', method: 'x' });
    readSubBatchAnswer(200, Buffer.from('{"jsonrpc":"2.0","result":7}'), [element]);
    expect(JSON.parse(element.answer!)).toEqual({ jsonrpc: '2.0', result: 7, id: 'q' });
  });

  it('keeps client errors as final answers', () => {
    const elements = [progress({ id: 1, method: 'x' }), progress({ id: 2, method: 'y' })];
    const verdict = readSubBatchAnswer(
      200,
      body([
        { id: 0, error: { code: -32602, message: 'bad' } },
        { id: 1, result: 0 },
      ]),
      elements,
    );
    expect(verdict.kind).toBe('success');
    expect(elements[0]!.answer).toBe('{"id":1,"error":{"code":-32602,"message":"bad"}}');
  });

  it('reads one -32600/-32700 object answering a batch as a node that takes no batches', () => {
    const elements = [progress({ id: 1, method: 'x' }), progress({ id: 2, method: 'y' })];
    const verdict = readSubBatchAnswer(
      200,
      body({ error: { code: -32600, message: 'batch requests are not supported' } }),
      elements,
    );
    // We sent valid JSON-RPC: not the client's fault, and not a failure of the node either.
    expect(verdict).toBe(REFUSED_BATCH);
    expect(verdict).toMatchObject({ kind: 'retry', penalty: 'never' });
    expect(elements.every((e) => !e.done)).toBe(true);
  });

  it('treats any other non-array answer to a batch as invalid for every element', () => {
    const elements = [progress({ id: 1, method: 'x' }), progress({ id: 2, method: 'y' })];
    const verdict = readSubBatchAnswer(
      200,
      body({ error: { code: -32000, message: 'boom' } }),
      elements,
    );
    expect(verdict).toMatchObject({ kind: 'retry', penalty: 'now' });
    expect(elements.every((e) => !e.done)).toBe(true);
  });

  it('classifies a single element like a single request', () => {
    const element = progress({ id: 'q', method: 'x' });
    expect(readSubBatchAnswer(502, Buffer.from('<html>'), [element]).kind).toBe('retry');
    expect(readSubBatchAnswer(200, body({ id: 0, result: 5 }), [element]).kind).toBe('success');
    expect(element.answer).toBe('{"id":"q","result":5}');
  });

  it('delivers a lone notification on any 2xx, even an empty body', () => {
    const element = progress({ method: 'x' });
    expect(readSubBatchAnswer(204, Buffer.alloc(0), [element]).kind).toBe('success');
    expect(element.done).toBe(true);
  });

  it('accepts an empty answer to a batch of notifications', () => {
    const elements = [progress({ method: 'x' }), progress({ method: 'y' })];
    expect(readSubBatchAnswer(200, Buffer.alloc(0), elements).kind).toBe('success');
    expect(elements.every((e) => e.done)).toBe(true);
  });
});

describe('readSubBatchAnswer, a final answer that is not JSON-RPC', () => {
  it('answers the element with the one "not JSON-RPC" wording of route-answer.ts', () => {
    const element = progress({ jsonrpc: '2.0', id: 7, method: 'getSlot' });
    const verdict = readSubBatchAnswer(404, Buffer.from('<html>Not Found</html>'), [element]);
    expect(verdict.kind).toBe('final');
    expect(JSON.parse(element.answer!)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Upstream answered HTTP 404 without a JSON-RPC body' },
      id: 7,
    });
  });
});
