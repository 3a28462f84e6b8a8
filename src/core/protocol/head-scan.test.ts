import { WASM_TEXT_BYTES } from './answer-scan.js';
import { describe, expect, it } from 'vitest';
import {
  BlockTag,
  absoluteSlotOf,
  blockNumberOfResult,
  blockParamOf,
  commitmentOf,
  contextSlotOf,
  errorContextSlotOf,
  isNullResult,
  lastBlockNumberOf,
  minContextSlotOf,
  numberAt,
  resultNumberOf,
  slotsBehindOf,
} from './head-scan.js';

const b = (text: string): Buffer => Buffer.from(text);

describe('head scans', () => {
  it('reads integers and 0x quantities, nothing else', () => {
    expect(numberAt(b('123,'), 0, 4)).toBe(123);
    expect(numberAt(b('"0x1f"'), 0, 6)).toBe(31);
    expect(numberAt(b('1.5'), 0, 3)).toBe(-1);
    expect(numberAt(b('1e5'), 0, 3)).toBe(-1);
    expect(numberAt(b('"12"'), 0, 4)).toBe(-1);
    expect(numberAt(b('"0x"'), 0, 4)).toBe(-1);
    expect(numberAt(b('null'), 0, 4)).toBe(-1);
    expect(numberAt(b('12345678901234567890'), 0, 20)).toBe(-1);
    // Every spelling a node reads: 0X, leading zeros; past 2^53 - 1 no number.
    expect(numberAt(b('"0X1F"'), 0, 6)).toBe(31);
    expect(numberAt(b('"0x000000000000000010"'), 0, 22)).toBe(16);
    expect(numberAt(b('"0x0000"'), 0, 8)).toBe(0);
    expect(numberAt(b('"0x1fffffffffffff"'), 0, 18)).toBe(Number.MAX_SAFE_INTEGER);
    expect(numberAt(b('"0x20000000000000"'), 0, 18)).toBe(-1);
    expect(numberAt(b('"0xffffffffffffffff"'), 0, 20)).toBe(-1);
  });

  it('reads a Solana context slot, apiVersion first or not', () => {
    expect(
      contextSlotOf(
        b(
          '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":341197053},"value":1},"id":1}',
        ),
      ),
    ).toBe(341197053);
    expect(
      contextSlotOf(b('{"jsonrpc":"2.0","result":{"context":{"slot":7},"value":1},"id":1}')),
    ).toBe(7);
    expect(contextSlotOf(b('{"jsonrpc":"2.0","result":5,"id":1}'))).toBe(-1);
    // A "context" far inside a large value is not the envelope's.
    expect(contextSlotOf(b(`{"result":{"value":"${'x'.repeat(400)}","context":{"slot":1}}}`))).toBe(
      -1,
    );
  });

  it('reads the context slot of an answer larger than the WebAssembly scan’s memory', () => {
    const value = 'v'.repeat(WASM_TEXT_BYTES);
    const envelope = (slot: string) =>
      b(
        `{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0","slot":${slot}},"value":"${value}"},"id":1}`,
      );
    expect(contextSlotOf(envelope('341197053'))).toBe(341197053);
    expect(contextSlotOf(envelope('"0x10"'))).toBe(16);
    expect(contextSlotOf(envelope('1.5'))).toBe(-1);
    // The envelope's `}` only past the scan's memory: still read.
    const late = `{"result":{"context":{"slot":9,"pad":"${value}"},"value":1}}`;
    expect(contextSlotOf(b(late))).toBe(9);
  });

  it('reads results and members of results', () => {
    expect(resultNumberOf(b('{"jsonrpc":"2.0","result":341197053,"id":1}'))).toBe(341197053);
    expect(resultNumberOf(b('{"jsonrpc":"2.0","id":"\\"result\\":9","result":"0x10"}'))).toBe(16);
    expect(blockNumberOfResult(b('{"id":1,"result":{"hash":"0xab","number":"0x2a"}}'))).toBe(42);
    expect(absoluteSlotOf(b('{"result":{"absoluteSlot":99,"epoch":1}}'))).toBe(99);
    expect(lastBlockNumberOf(b('{"result":[{"blockNumber":"0x1"},{"blockNumber":"0x5"}]}'))).toBe(
      5,
    );
    expect(isNullResult(b('{"jsonrpc":"2.0","id":1,"result":null}'))).toBe(true);
    expect(isNullResult(b('{"jsonrpc":"2.0","id":1,"result":{}}'))).toBe(false);
  });

  it('reads heads from node-state errors', () => {
    const minSlot = b(
      '{"jsonrpc":"2.0","error":{"code":-32016,"message":"Minimum context slot has not been reached","data":{"contextSlot":1234}},"id":1}',
    );
    expect(errorContextSlotOf(minSlot)).toBe(1234);
    const behind = b(
      '{"error":{"code":-32005,"message":"Node is behind by 42 slots","data":{"numSlotsBehind":42}}}',
    );
    expect(slotsBehindOf(behind)).toBe(42);
  });

  it('reads what a request asks for', () => {
    const balance = b(
      '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["abc",{"commitment":"confirmed","minContextSlot":500}]}',
    );
    expect(minContextSlotOf(balance)).toBe(500);
    expect(commitmentOf(balance)).toBe(1);
    expect(commitmentOf(b('{"method":"getSlot","params":[{"commitment":"processed"}]}'))).toBe(0);
    expect(commitmentOf(b('{"method":"getSlot"}'))).toBe(2);
    const block = (params: string) => b(`{"jsonrpc":"2.0","id":1,"method":"m","params":${params}}`);
    expect(blockParamOf(block('["0x10",false]'), 0)).toBe(16);
    expect(blockParamOf(block('["latest",false]'), 0)).toBe(BlockTag.latest);
    expect(blockParamOf(block('["finalized",false]'), 0)).toBe(BlockTag.finalized);
    expect(blockParamOf(block('["pending",false]'), 0)).toBe(BlockTag.other);
    expect(blockParamOf(block('[{"to":"0x1"}]'), 1)).toBe(BlockTag.latest);
    expect(blockParamOf(block('[{"to":"0x1"},"safe"]'), 1)).toBe(BlockTag.safe);
    expect(blockParamOf(b('{"method":"m"}'), 0)).toBe(BlockTag.latest);
  });
});
