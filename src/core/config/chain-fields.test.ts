/** loadConfig: the lag-aware routing keys of [server] (issue 26). */
import { describe, expect, it } from 'vitest';
import { useConfigDir } from '../../../test/support/config-loading.js';

const { loadServer } = useConfigDir();

describe('loadConfig: [server] max_lag, head_*, expect_chain', () => {
  it('leaves the shipped defaults when none is set', () => {
    const result = loadServer({});
    expect(result.errors).toEqual([]);
    expect(result.config?.server.chain).toBeUndefined();
  });

  it('reads every key', () => {
    const result = loadServer({
      max_lag: 10,
      head_max_age_seconds: 30,
      head_sample_percent: 5,
      expect_chain: '0x1',
    });
    expect(result.errors).toEqual([]);
    expect(result.config?.server.chain).toEqual({
      maxLag: [10, 10],
      headMaxAgeSeconds: 30,
      headSamplePercent: 5,
      expectChain: '0x1',
    });
    const solana = loadServer({ expect_chain: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d' });
    expect(solana.errors).toEqual([]);
  });

  it.each([
    [{ max_lag: -1 }, 'server.max_lag', 'must be between 0 and 1000000, got -1'],
    [{ head_sample_percent: 80 }, 'server.head_sample_percent', 'must be between 0 and 50, got 80'],
    [{ head_max_age_seconds: 0 }, 'server.head_max_age_seconds', 'must be between 1'],
    [{ expect_chain: 1 }, 'server.expect_chain', 'must be a string'],
    [
      { expect_chain: 'mainnet' },
      'server.expect_chain',
      'is neither a chain id nor a genesis hash',
    ],
  ])('refuses %j naming the field', (fields, path, message) => {
    const result = loadServer(fields);
    const error = result.errors.find((problem) => problem.path === path);
    expect(error?.message).toContain(message);
  });
});
