/** An eth_getLogs request's range, read and cut (issue 29). */
import { describe, expect, it } from 'vitest';
import { BlockTag } from './head-scan.js';
import { HUGE_BLOCK, chunkBody, reachesHugeBlock, readLogsFilter } from './logs-range.js';

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

  it('reads every spelling of a block number a node reads, and calls one past 2^53 - 1 huge', () => {
    expect(
      readLogsFilter(body([{ fromBlock: '0X0a', toBlock: '0x00000000000fffff' }])),
    ).toMatchObject({
      from: 10,
      to: 0xfffff,
    });
    const huge = readLogsFilter(body([{ fromBlock: '0x0', toBlock: '0xffffffffffffffff' }]))!;
    expect(huge.to).toBe(HUGE_BLOCK);
    expect(reachesHugeBlock(huge)).toBe(true);
    const same = { fromBlock: '0xffffffffffffffff', toBlock: '0X00FFFFFFFFFFFFFFFF' };
    expect(reachesHugeBlock(readLogsFilter(body([same]))!)).toBe(false);
    const wider = { fromBlock: '0xffffffffffffffff', toBlock: '0x1ffffffffffffffff' };
    expect(reachesHugeBlock(readLogsFilter(body([wider]))!)).toBe(true);
    expect(
      reachesHugeBlock(readLogsFilter(body([{ fromBlock: '0x0', toBlock: '0x1fffffffffffff' }]))!),
    ).toBe(false);
    // Not block numbers (nor inherited object keys): the node answers them.
    for (const toBlock of ['0x', 'constructor', '0x1g', 'LATEST']) {
      expect(readLogsFilter(body([{ fromBlock: '0x0', toBlock }]))).toBeUndefined();
    }
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
