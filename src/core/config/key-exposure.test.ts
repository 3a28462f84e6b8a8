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

function problems(limits: Parameters<typeof clientKey>[2], scope: ClusterConfig): ProblemList {
  const problems = new ProblemList();
  checkKeyLimitsScope(keysOf(clientKey('k', SECRET, limits)), scope, [], 'c.toml', problems);
  return problems;
}

describe('per-key limits with several processes', () => {
  it('are taken with workers and with replicas on Redis: each process enforces its share', () => {
    const scopes = [cluster(1, 'redis://127.0.0.1:6379'), cluster(2), cluster(4, 'redis://x')];
    const limits = { monthlyCredits: 100, rpsLimit: 50, maxConcurrent: 8, perIpRps: 4 };
    for (const scope of scopes) {
      const found = problems(limits, scope);
      expect(found.errors).toEqual([]);
      expect(found.warnings).toEqual([]);
    }
  });

  it('warns when a limit is below the number of workers that split it', () => {
    const found = problems({ maxConcurrent: 8, perIpRps: 1 }, cluster(2));
    expect(found.errors).toEqual([]);
    expect(found.warnings.map((w) => [w.path, w.message])).toEqual([
      [
        'keys[0]',
        expect.stringContaining("key 'k' has per_ip_rps = 1 below the 2 workers") as unknown,
      ],
    ]);
  });

  it('refuses a node named like a key’s usage entry', () => {
    const found = new ProblemList();
    checkKeyLimitsScope(undefined, undefined, ['key:x'], 'c.toml', found);
    expect(found.errors[0]!.message).toContain("node name 'key:x' starts with 'key:'");
  });
});
