import { describe, expect, it } from 'vitest';
import { throughputOf } from './load-runner.js';
import { nearestRank } from './oha-text.js';
import { busyTicksOf, cpuTicksOf, statusKiB } from './process-stats.js';
import { redactUrl } from './redact-url.js';
import { methodOf } from './tls-amortization.js';

describe('redactUrl', () => {
  it('hides query values, long path segments and credentials', () => {
    expect(redactUrl('https://mainnet.helius-rpc.com/?api-key=abc123')).toBe(
      'https://mainnet.helius-rpc.com/?api-key=***',
    );
    expect(redactUrl('https://eth-mainnet.g.alchemy.com/v2/AbCdEfGhIjKlMnOpQrSt')).toBe(
      'https://eth-mainnet.g.alchemy.com/v2/***',
    );
    expect(redactUrl('https://user:pw@host/')).toBe('https://host/');
  });
});

describe('throughputOf', () => {
  it('takes the best second as the peak and the median as the steady state', () => {
    expect(throughputOf([100, 400, 300, 200])).toEqual({ peak: 400, steady: 250 });
    expect(throughputOf([])).toEqual({ peak: 0, steady: 0 });
  });
});

describe('nearestRank', () => {
  it('is exact on small samples', () => {
    expect(nearestRank([1, 2, 3, 4], 50)).toBe(2);
    expect(nearestRank([1, 2, 3, 4], 99)).toBe(4);
  });
});

describe('/proc parsing', () => {
  it('reads utime + stime after a process name with spaces and parentheses', () => {
    const stat = '1234 (node (a b)) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 11 0';
    expect(cpuTicksOf(stat)).toBe(300);
  });

  it('reads a kB field of /proc/<pid>/status', () => {
    expect(statusKiB('Name:\tnode\nVmHWM:\t  123456 kB\nVmRSS:\t 1000 kB\n', 'VmHWM')).toBe(123456);
  });

  it('counts steal as busy CPU time, and guest time only once (it is inside user)', () => {
    // user nice system idle iowait irq softirq steal guest guest_nice
    expect(busyTicksOf('cpu1 100 2 30 5000 40 5 6 7 50 1')).toBe(100 + 2 + 30 + 5 + 6 + 7);
    expect(busyTicksOf('cpu  100 0 30 5000 40 0 6')).toBe(136);
  });
});

describe('methodOf', () => {
  it('names the method of a request or of a batch’s first element', () => {
    expect(methodOf('{"method":"getHealth"}')).toBe('getHealth');
    expect(methodOf('[{"method":"eth_chainId"}]')).toBe('eth_chainId');
    expect(methodOf('not json')).toBe('request');
  });
});
