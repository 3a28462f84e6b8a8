/**
 * The policy in force: the shipped rules (protocol/method-cache-rules.ts) with the config's
 * `[cache]` switches and `[cache.methods]` overrides applied, compiled once per load into one
 * Map. A method that is neither cached nor coalesced is not in the Map, so the request path
 * pays one failed lookup for it and nothing else.
 */
import type { CacheConfig } from '../config/types.js';
import {
  SHIPPED_CACHE_RULES,
  WRITE_METHODS,
  type CacheRuleKind,
  type FinalityCheck,
} from '../protocol/method-cache-rules.js';

/** One method's compiled rule. */
export interface MethodPolicy {
  readonly method: string;
  /** 'never' when the cache is off. */
  readonly cache: CacheRuleKind;
  readonly ttlMs: number;
  readonly finality: FinalityCheck | undefined;
  readonly coalesce: boolean;
  /** Index of the method's metric series (set by the metrics). */
  readonly series: number;
}

/** Defaults when no `[cache]` table is configured: coalescing on, cache off. */
export const NO_CACHE_CONFIG: CacheConfig = {
  enabled: false,
  coalesce: true,
  maxBytes: 0,
  maxEntryBytes: 0,
  ttlMs: 400,
  evmFinalityDepth: undefined,
  responseHeader: false,
  methods: new Map(),
};

/**
 * Compiles `config` into method → policy; `seriesOf` gives each method's metric series.
 * `writes` (the `[routing]` write list) are never cached or coalesced, like the shipped writes.
 */
export function compilePolicy(
  config: CacheConfig,
  seriesOf: (method: string) => number,
  writes: readonly string[] = [],
): Map<string, MethodPolicy> {
  const policies = new Map<string, MethodPolicy>();
  const names = new Set([...SHIPPED_CACHE_RULES.keys(), ...config.methods.keys()]);
  for (const method of names) {
    if (WRITE_METHODS.has(method) || writes.includes(method)) continue;
    const shipped = SHIPPED_CACHE_RULES.get(method);
    const override = config.methods.get(method);
    const rule = override?.cache ?? shipped?.cache ?? 'never';
    const cache = config.enabled ? rule : 'never';
    const coalesce = config.coalesce && (override?.coalesce ?? shipped?.coalesce ?? false);
    if (cache === 'never' && !coalesce) continue;
    policies.set(method, {
      method,
      cache,
      ttlMs: override?.ttlMs ?? config.ttlMs,
      finality: rule === 'final' ? shipped?.finality : undefined,
      coalesce,
      series: seriesOf(method),
    });
  }
  return policies;
}

/** Whether two compiled policies treat `method` the same (else its stored answers go). */
export function samePolicy(a: MethodPolicy | undefined, b: MethodPolicy | undefined): boolean {
  return a?.cache === b?.cache && a?.ttlMs === b?.ttlMs;
}
