/**
 * The cluster's gauges (`cascade_cluster_*`), read at scrape time from the process that
 * coordinates limits and usage with the others: members, Redis up, errors, sync age, this
 * process's shares and the credits not yet acknowledged by the shared store.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ClusterSample } from './metrics.js';

/** Registers the cluster gauges on `registry`, fed by `source`. */
export function registerClusterGauges(registry: Registry, source: () => ClusterSample): void {
  const registers = [registry];
  new Gauge({
    name: 'cascade_cluster_members',
    help: 'Processes sharing the providers’ limits and quotas (replicas seen in Redis)',
    registers,
    collect() {
      this.set(source().members);
    },
  });
  new Gauge({
    name: 'cascade_cluster_redis_up',
    help: 'Whether the last sync with Redis succeeded (1) or not (0)',
    registers,
    collect() {
      this.set(source().redisUp ? 1 : 0);
    },
  });
  new Counter({
    name: 'cascade_cluster_redis_errors_total',
    help: 'Syncs with Redis that failed or timed out',
    registers,
    collect() {
      this.reset();
      this.inc(source().errors);
    },
  });
  new Gauge({
    name: 'cascade_cluster_sync_age_seconds',
    help: 'Seconds since the last successful sync of limits and usage',
    registers,
    collect() {
      const age = source().syncAgeSeconds;
      this.set(Number.isFinite(age) ? age : -1);
    },
  });
  const share = (
    name: string,
    help: string,
    pick: (s: { rps: number; concurrent: number }) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const [node, value] of source().shares) this.set({ node }, pick(value));
      },
    });
  share('cascade_cluster_share_rps', 'This process’s share of a node’s rps_limit', (s) => s.rps);
  share(
    'cascade_cluster_share_concurrency',
    'This process’s share of a node’s max_concurrent',
    (s) => s.concurrent,
  );
  new Gauge({
    name: 'cascade_cluster_unflushed_credits',
    help: 'Credits booked by this process that the shared store has not acknowledged yet',
    labelNames: ['node'],
    registers,
    collect() {
      this.reset();
      for (const [node, value] of source().unflushed) this.set({ node }, value);
    },
  });
}
