/**
 * Builders for balancer configs and price lists in tests. Defaults describe one valid node on
 * 127.0.0.1 priced by `prices/basic.toml`; override or remove (`undefined`) any key.
 */
import { tomlArrayTable, tomlLines, tomlTable, type TomlFields } from './toml.js';

/** A valid `[server]` table. */
export const SERVER_DEFAULTS: TomlFields = { host: '127.0.0.1', port: 3000 };

/** Fields of a valid node named `name`, priced by `prices/basic.toml`. */
export function nodeFields(name = 'node-a', overrides: TomlFields = {}): TomlFields {
  return {
    name,
    url: 'http://127.0.0.1:8891',
    tier: 0,
    rps_limit: 100,
    max_concurrent: 10,
    monthly_limit: 1000,
    provider_pricing_path: 'prices/basic.toml',
    ...overrides,
  };
}

/** What a balancer config holds; `extra` is appended verbatim (unknown tables, broken text). */
export interface BalancerConfigSpec {
  /** `[server]` fields (merged over SERVER_DEFAULTS); `null` leaves the table out. */
  readonly server?: TomlFields | null;
  /** One entry per `[[nodes]]`; default one valid node. */
  readonly nodes?: readonly TomlFields[];
  readonly extra?: string;
}

/** Balancer config TOML text. */
export function balancerToml(spec: BalancerConfigSpec = {}): string {
  const parts: string[] = [];
  if (spec.server !== null) parts.push(tomlTable('server', { ...SERVER_DEFAULTS, ...spec.server }));
  for (const node of spec.nodes ?? [nodeFields()]) parts.push(tomlArrayTable('nodes', node));
  if (spec.extra) parts.push(spec.extra);
  return parts.join('\n');
}

/** What a provider price list holds. */
export interface PriceListSpec {
  /** `[limits]` fields; absent = no table. */
  readonly limits?: TomlFields;
  /** `[routing]` fields; `null` leaves the (required) table out. Default `{ getBalance: 1 }`. */
  readonly routing?: TomlFields | null;
  /** `[custom]` fields; absent = no table. */
  readonly custom?: TomlFields;
  readonly extra?: string;
}

/** Price list TOML text. */
export function priceListToml(spec: PriceListSpec = {}): string {
  const parts: string[] = [];
  if (spec.limits) parts.push(tomlTable('limits', spec.limits));
  if (spec.routing !== null) parts.push(tomlTable('routing', spec.routing ?? { getBalance: 1 }));
  if (spec.custom) parts.push(tomlTable('custom', spec.custom));
  if (spec.extra) parts.push(spec.extra);
  return parts.join('\n');
}

/** Top-level `key = value` lines (for configs that need keys outside any table). */
export function topLevel(fields: TomlFields): string {
  return tomlLines(fields);
}
