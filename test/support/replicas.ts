/**
 * Replicas of one proxy started in this process (each a full `startCascade` with its own
 * quotas file), sharing limits and usage through a real Redis.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/core/clock.js';
import type { KeysConfig } from '../../src/core/config/key-types.js';
import type {
  AccountConfig,
  ClusterConfig,
  Config,
  NodeConfig,
  ServerConfig,
} from '../../src/core/config/types.js';
import type { Cascade } from '../../src/core/service.js';
import { serverConfig } from './proxy-harness.js';
import { startTestCascade } from './test-cascade.js';

/** A replica and what it logged. */
export interface Replica {
  readonly cascade: Cascade;
  readonly url: string;
  /** The admin listener's URL, when the replica has one (`server.adminPort`). */
  readonly admin: string | undefined;
  readonly logs: string[];
  /** Credits this replica believes the fleet booked on `node`. */
  used(node: string): number;
  metrics(): Promise<string>;
}

/** Options of one replica. */
export interface ReplicaOptions {
  readonly id: string;
  readonly redisUrl: string;
  readonly nodes: readonly NodeConfig[];
  readonly prefix: string;
  readonly quotasPath?: string;
  readonly clock?: Clock;
  readonly cluster?: Partial<ClusterConfig>;
  readonly keys?: KeysConfig;
  /** `[server]` settings over the defaults (e.g. `adminPort: 0`, `requireKey`). */
  readonly server?: Partial<ServerConfig>;
  /** Provider accounts the nodes name (`account`). */
  readonly accounts?: readonly AccountConfig[];
}

/**
 * Every replica's deadlines unless a test sets its own: replica tests run one node, where an
 * attempt past the harness's 500 ms has nothing to fall back on and the call ends 502 — seen in
 * full CI runs with replicas, Redis and the mock sharing two busy cores. They test shared state,
 * not deadlines.
 */
const UNHURRIED_DEADLINES = { requestTimeoutMs: 30_000, attemptTimeoutMs: 15_000 };

/** Starts one replica on a free port. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const cluster: ClusterConfig = {
    workers: 1,
    redisUrl: options.redisUrl,
    redactedRedisUrl: options.redisUrl,
    keyPrefix: options.prefix,
    replicaId: options.id,
    syncIntervalMs: 50,
    redisTimeoutMs: 250,
    leaseTtlMs: 1000,
    fallbackFraction: undefined,
    ...options.cluster,
  };
  const config: Config = {
    path: '/test/config.toml',
    server: serverConfig({ enableMetrics: true, ...UNHURRIED_DEADLINES, ...options.server }),
    nodes: options.nodes,
    cluster,
    ...(options.keys ? { keys: options.keys } : {}),
    ...(options.accounts ? { accounts: options.accounts } : {}),
  };
  const quotasPath =
    options.quotasPath ?? join(mkdtempSync(join(tmpdir(), 'cascade-replica-')), 'quotas.json');
  const { cascade, logs } = await startTestCascade(config, { quotasPath, clock: options.clock });
  const url = `http://127.0.0.1:${cascade.server.port}`;
  return {
    cascade,
    url,
    admin: cascade.adminPort === undefined ? undefined : `http://127.0.0.1:${cascade.adminPort}`,
    logs,
    used: (node) => cascade.server.topology.node(node)!.usage.used,
    metrics: async () => (await fetch(`${url}/metrics`)).text(),
  };
}
