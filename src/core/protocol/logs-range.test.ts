/** An eth_getLogs request's range, read and cut (issue 29). */
import { describe, expect, it } from 'vitest';
import { BlockTag } from './head-scan.js';
import { chunkBody, readLogsFilter } from './logs-range.js';

const body = (params: unknown): Buffer =>
  Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'eth_getLogs', params }));

describe('readLogsFilter', () => {
  it('reads numbers, tags and their defaults', () => {
    expect(readLogsFilter(body([{ fromBlock: '0x10', toBlock: '0x20' }]))).toMatchObject({
      from: 16,
      to: 32,
    });
    expect(readLogsFilter(body([{ fromBlock: '0x10' }]))).toMatchObject({
      from: 16,
      to: BlockTag.latest,
    });
    expect(readLogsFilter(body([{ fromBlock: 'earliest', toBlock: 'finalized' }]))).toMatchObject({
      from: 0,
      to: BlockTag.finalized,
    });
    expect(readLogsFilter(body([{ fromBlock: 'safe', toBlock: 'pending' }]))).toMatchObject({
      from: BlockTag.safe,
      to: BlockTag.other,
    });
  });

  it('has no range to cut for a blockHash filter or anything unreadable', () => {
    expect(readLogsFilter(body([{ blockHash: '0xab' }]))).toBeUndefined();
    expect(readLogsFilter(body([{ fromBlock: 'soon' }]))).toBeUndefined();
    expect(readLogsFilter(body([]))).toBeUndefined();
    expect(readLogsFilter(body('x'))).toBeUndefined();
    expect(readLogsFilter(Buffer.from('{"method":"eth_getLogs",'))).toBeUndefined();
  });
});

describe('chunkBody', () => {
  it('keeps the filter and sets the chunk range', () => {
    const logs = readLogsFilter(
      body([{ fromBlock: '0x0', toBlock: 'latest', address: '0xab', topics: [null, '0x01'] }]),
    )!;
    expect(JSON.parse(chunkBody(logs, 256, 511).toString())).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getLogs',
      params: [{ fromBlock: '0x100', toBlock: '0x1ff', address: '0xab', topics: [null, '0x01'] }],
    });
  });
});
