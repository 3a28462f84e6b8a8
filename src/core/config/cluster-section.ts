import { availableParallelism, hostname } from 'node:os';
import { substituteEnv } from './env-substitution.js';
import type { ProblemList } from './problem-list.js';
import { redactUrl } from './redact-url.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';
import type { ClusterConfig } from './types.js';

/** How often shares and usage are synced with Redis (ms); the bound is 100. */
export const DEFAULT_SYNC_INTERVAL_MS = 100;
/** A Redis call that takes longer than this is given up (ms). */
export const DEFAULT_REDIS_TIMEOUT_MS = 250;
/** Shares outlive a lost Redis (and a member its last heartbeat) by this long (ms). */
export const DEFAULT_LEASE_TTL_MS = 3000;
/** The most workers one process may fork. */
const MAX_WORKERS = 256;

const CLUSTER_KEYS = [
  'workers',
  'redis_url',
  'key_prefix',
  'replica_id',
  'sync_interval_ms',
  'redis_timeout_ms',
  'lease_ttl_ms',
  'fallback_fraction',
] as const;

function readWorkers(
  table: Table,
  file: string,
  r: FieldReader,
  problems: ProblemList,
): number | undefined {
  const value = table.workers;
  if (value === 'auto') {
    r.accept('workers');
    return Math.max(1, Math.min(MAX_WORKERS, availableParallelism()));
  }
  if (typeof value === 'string') {
    r.accept('workers');
    problems.error(
      file,
      'cluster.workers',
      `must be a whole number or "auto", got ${describeType(value)}`,
      'e.g. workers = 2, or workers = "auto" for one per CPU',
    );
    return undefined;
  }
  return r.integer('workers', {
    min: 1,
    max: MAX_WORKERS,
    required: false,
    hint: 'worker processes sharing the port; "auto" = one per CPU (default 1)',
  });
}

function readFraction(
  table: Table,
  file: string,
  r: FieldReader,
  problems: ProblemList,
): number | undefined {
  r.accept('fallback_fraction');
  const value = table.fallback_fraction;
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    problems.error(
      file,
      'cluster.fallback_fraction',
      `must be a number above 0 and at most 1, got ${describeType(value)}`,
      'the share of each limit a replica keeps once Redis has been unreachable for lease_ttl_ms; omit it to split by the members last seen',
    );
    return undefined;
  }
  return value;
}

function readRedisUrl(
  raw: string | undefined,
  env: NodeJS.ProcessEnv,
  file: string,
  problems: ProblemList,
): { url: string; redacted: string } | undefined {
  if (raw === undefined) return undefined;
  const sub = substituteEnv(raw, env);
  for (const name of sub.missing) {
    problems.error(
      file,
      'cluster.redis_url',
      `env var ${name} is required but not set`,
      `export ${name}=… or add it to .env`,
    );
  }
  if (sub.missing.length > 0 || sub.malformed.length > 0) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(sub.value);
  } catch {
    problems.error(
      file,
      'cluster.redis_url',
      'not a URL',
      'e.g. redis_url = "redis://127.0.0.1:6379" (rediss:// for TLS)',
    );
    return undefined;
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    problems.error(
      file,
      'cluster.redis_url',
      `unsupported scheme '${parsed.protocol}'`,
      'write redis://host:port or rediss://host:port',
    );
    return undefined;
  }
  return { url: sub.value, redacted: redactUrl(sub.masked) };
}

/** Validates `[cluster]`; undefined when the table is absent (one process, no Redis). */
export function readClusterSection(
  doc: Table,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
): ClusterConfig | undefined {
  const section = doc.cluster;
  if (section === undefined) return undefined;
  if (!isTable(section)) {
    problems.error(
      file,
      'cluster',
      `must be a table, got ${describeType(section)}`,
      'write [cluster]',
    );
    return undefined;
  }
  const r = new FieldReader(section, file, 'cluster', problems);
  const workers = readWorkers(section, file, r, problems);
  const redis = readRedisUrl(
    r.string('redis_url', false, 'e.g. "redis://127.0.0.1:6379"'),
    env,
    file,
    problems,
  );
  const keyPrefix = r.string(
    'key_prefix',
    false,
    'a short name every replica of one proxy shares, e.g. "cascade"',
  );
  const replicaId = r.string(
    'replica_id',
    false,
    'a name unique to this replica (default: host name and pid)',
  );
  const syncIntervalMs = r.integer('sync_interval_ms', {
    min: 10,
    max: 100,
    required: false,
    hint: `ms between syncs with Redis; the overspend bound grows with it (default ${DEFAULT_SYNC_INTERVAL_MS})`,
  });
  const redisTimeoutMs = r.integer('redis_timeout_ms', {
    min: 10,
    max: 10_000,
    required: false,
    hint: `a Redis call slower than this is given up (default ${DEFAULT_REDIS_TIMEOUT_MS})`,
  });
  const leaseTtlMs = r.integer('lease_ttl_ms', {
    min: 500,
    max: 600_000,
    required: false,
    hint: `how long shares outlive a lost Redis, and a member its last heartbeat (default ${DEFAULT_LEASE_TTL_MS})`,
  });
  const fallbackFraction = readFraction(section, file, r, problems);
  r.rejectUnknown(CLUSTER_KEYS);
  if (keyPrefix !== undefined && !/^[A-Za-z0-9_.:-]{1,64}$/.test(keyPrefix)) {
    problems.error(
      file,
      'cluster.key_prefix',
      'must be 1–64 letters, digits or _ . : -',
      'e.g. key_prefix = "cascade-prod"',
    );
  }
  if (replicaId !== undefined && !/^[A-Za-z0-9_.:-]{1,128}$/.test(replicaId)) {
    problems.error(
      file,
      'cluster.replica_id',
      'must be 1–128 letters, digits or _ . : -',
      'or omit it: host name and pid',
    );
  }
  if (redis === undefined && section.redis_url === undefined) {
    for (const key of [
      'key_prefix',
      'replica_id',
      'sync_interval_ms',
      'redis_timeout_ms',
      'lease_ttl_ms',
      'fallback_fraction',
    ]) {
      if (section[key] !== undefined) {
        problems.warn(
          file,
          `cluster.${key}`,
          'has no effect without cluster.redis_url',
          'set redis_url to share limits and usage between replicas',
        );
      }
    }
  }
  return {
    workers: workers ?? 1,
    redisUrl: redis?.url,
    redactedRedisUrl: redis?.redacted,
    keyPrefix: keyPrefix ?? 'cascade',
    replicaId: replicaId ?? `${hostname()}:${process.pid}`,
    syncIntervalMs: syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS,
    redisTimeoutMs: redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
    leaseTtlMs: leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    fallbackFraction,
  };
}
