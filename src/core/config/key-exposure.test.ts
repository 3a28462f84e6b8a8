import { describe, expect, it } from 'vitest';
import { clientKey, keysOf } from '../../../test/support/client-keys.js';
import { checkKeyLimitsScope } from './key-exposure.js';
import { ProblemList } from './problem-list.js';
import type { ClusterConfig } from './types.js';

const SECRET = 'ck_scope_0123456789abcdefghijklmnop';

function cluster(workers: number, redisUrl?: string): ClusterConfig {
  return {
    workers,
    redisUrl,
    redactedRedisUrl: redisUrl,
    keyPrefix: 'cascade',
    replicaId: 'a',
    syncIntervalMs: 100,
    redisTimeoutMs: 250,
    leaseTtlMs: 1000,
    fallbackFraction: undefined,
  };
}

function errors(limits: Parameters<typeof clientKey>[2], scope: ClusterConfig): string[] {
  const problems = new ProblemList();
  checkKeyLimitsScope(keysOf(clientKey('k', SECRET, limits)), scope, [], 'c.toml', problems);
  return problems.errors.map((problem) => problem.message);
}

describe('which per-key limits several processes share', () => {
  it('replicas on Redis share monthly_credits, not rate or concurrency limits', () => {
    const redis = cluster(1, 'redis://127.0.0.1:6379');
    expect(errors({ monthlyCredits: 100 }, redis)).toEqual([]);
    for (const limits of [{ rpsLimit: 5 }, { maxConcurrent: 2 }, { perIpRps: 1 }])
      expect(errors(limits, redis)[0]).toContain('not shared between replicas yet');
  });

  it('several workers share no per-key limit yet', () => {
    for (const scope of [cluster(2), cluster(2, 'redis://127.0.0.1:6379')])
      expect(errors({ monthlyCredits: 100 }, scope)[0]).toContain('not shared between workers yet');
  });
});
