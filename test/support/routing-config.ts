/** `[routing]` sections for integration tests, built like the loader builds them. */
import { shippedRouting } from '../../src/core/config/routing-section.js';
import type { MethodRouting, RoutingConfig } from '../../src/core/config/types.js';

/** The shipped routing with `methods` set over it (and optionally other fields). */
export function routingWith(
  methods: Record<string, Partial<MethodRouting>>,
  overrides: Partial<Omit<RoutingConfig, 'methods'>> = {},
): RoutingConfig {
  const shipped = shippedRouting();
  const merged = new Map(shipped.methods);
  for (const [name, policy] of Object.entries(methods)) {
    merged.set(name, { strategy: 'cost', hedgeAfterMs: undefined, broadcast: 1, ...policy });
  }
  return { ...shipped, ...overrides, methods: merged };
}

/** Sums every sample of `name` whose labels include `labels` in a Prometheus text. */
export function metricValue(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const labelText = line.slice(name.length + 1, close);
    const ok = Object.entries(labels).every(([key, value]) =>
      labelText.includes(`${key}="${value}"`),
    );
    if (ok) total += Number(line.slice(close + 2));
  }
  return total;
}
