/** The providers' eth_getLogs limit errors, read into what they teach (issue 29). */
import { describe, expect, it } from 'vitest';
import { logsLimitError, type LogsLimitShape } from '../../mock/logs-limit-errors.js';
import { isLogsLimit, logsLimitOfAnswer, readLogsLimit } from './logs-limit-errors.js';

function answer(shape: LogsLimitShape, limit: number, from = 0x100, to = 0x9000): Buffer {
  const { code, message, data } = logsLimitError(shape, { limit, from, to });
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message, data } }));
}

describe('readLogsLimit', () => {
  it('reads each provider shape the mocks answer', () => {
    expect(logsLimitOfAnswer(answer('alchemy', 500))).toEqual({
      blockRange: 500,
      suggested: [0x100, 0x100 + 499],
    });
    expect(logsLimitOfAnswer(answer('quicknode', 10_000))).toEqual({ blockRange: 10_000 });
    expect(logsLimitOfAnswer(answer('infura_range', 10_000))).toEqual({ blockRange: 10_000 });
    expect(logsLimitOfAnswer(answer('infura', 10_000))).toEqual({
      results: 10_000,
      suggested: [0x100, 0x100 + 9999],
    });
    expect(logsLimitOfAnswer(answer('geth', 10_000))).toEqual({ results: 10_000 });
  });

  it('reads the shapes quoted in public reports, verbatim', () => {
    // dank_mids#772
    expect(
      readLogsLimit(
        'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]',
      ),
    ).toEqual({ blockRange: 500, suggested: [0x123c9b2, 0x123cba5] });
    // bancorprotocol/webapp#523 and Alchemy's response-size variant
    expect(
      readLogsLimit(
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x0, 0x133e71]',
      ),
    ).toEqual({ results: 10_000, suggested: [0, 0x133e71] });
    // ethers-io/ethers.js#4703: the structured data wins over the prose
    expect(
      readLogsLimit(
        'query returned more than 10000 results. Try with this block range [0xBDE5F8, 0x102DBCC].',
        {
          from: '0xBDE5F8',
          limit: 10000,
          to: '0x102DBCC',
        },
      ),
    ).toEqual({ results: 10_000, suggested: [0xbde5f8, 0x102dbcc] });
    // eternalsafe/wallet#57, INFURA/infura#237, paradigmxyz/reth#8558
    expect(readLogsLimit('eth_getLogs is limited to a 10,000 range')).toEqual({
      blockRange: 10_000,
    });
    expect(readLogsLimit('range 1000000 exceeds limit of 10000')).toEqual({ blockRange: 10_000 });
    expect(readLogsLimit('query exceeds max block range 5000')).toEqual({ blockRange: 5000 });
    // Chainstack, Ankr: a limit with no number — the caller halves the range
    expect(readLogsLimit('Block range limit exceeded.')).toEqual({});
    expect(readLogsLimit('block range is too wide')).toEqual({});
  });

  it('leaves every other error alone', () => {
    for (const message of [
      'execution reverted',
      'header not found',
      'Your app has exceeded its compute units per second capacity',
      'project ID request rate exceeded',
      'invalid block range params',
    ]) {
      expect(isLogsLimit(message), message).toBe(false);
      expect(readLogsLimit(message), message).toBeUndefined();
    }
    expect(logsLimitOfAnswer(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}'))).toBeUndefined();
    expect(logsLimitOfAnswer(Buffer.from('<html>'))).toBeUndefined();
  });
});
