import {
  SHIPPED_CACHE_RULES,
  WRITE_METHODS,
  type CacheRuleKind,
} from '../protocol/method-cache-rules.js';
import type { ProblemList } from './problem-list.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';
import type { CacheConfig, CacheMethodOverride } from './types.js';

/** Default memory bound of the cache: 64 MiB. */
export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** Default cap of one stored answer: 256 KiB (bigger answers are not worth the memory). */
export const DEFAULT_CACHE_MAX_ENTRY_BYTES = 256 * 1024;
/** Default TTL of the head-tracking rows: under one Solana slot (400 ms) and one EVM block. */
export const DEFAULT_CACHE_TTL_MS = 400;

const CACHE_KEYS = [
  'enabled',
  'coalesce',
  'max_bytes',
  'max_entry_bytes',
  'ttl_ms',
  'evm_finality_depth',
  'response_header',
  'methods',
] as const;
const METHOD_KEYS = ['cache', 'ttl_ms', 'coalesce'] as const;
const RULE_KINDS: readonly CacheRuleKind[] = ['forever', 'final', 'ttl', 'never'];

function readRule(
  r: FieldReader,
  method: string,
  path: string,
  file: string,
  problems: ProblemList,
): CacheRuleKind | undefined {
  const cache = r.string('cache', false, `one of ${RULE_KINDS.join(', ')}`);
  if (cache === undefined) return undefined;
  if (!(RULE_KINDS as readonly string[]).includes(cache)) {
    problems.error(
      file,
      `${path}.cache`,
      `unknown rule ${JSON.stringify(cache)}`,
      `write one of ${RULE_KINDS.map((k) => `"${k}"`).join(', ')}`,
    );
    return undefined;
  }
  if (cache === 'final' && SHIPPED_CACHE_RULES.get(method)?.finality === undefined) {
    const known = [...SHIPPED_CACHE_RULES].filter(([, rule]) => rule.finality !== undefined);
    problems.error(
      file,
      `${path}.cache`,
      `cascade cannot tell when an answer of ${method} is final`,
      `"final" applies to ${known.map(([name]) => name).join(', ')}; use "ttl" or "forever"`,
    );
    return undefined;
  }
  return cache as CacheRuleKind;
}

function readMethod(
  method: string,
  value: unknown,
  file: string,
  problems: ProblemList,
): CacheMethodOverride | undefined {
  const path = `cache.methods.${method}`;
  if (!isTable(value)) {
    problems.error(
      file,
      path,
      `must be a table, got ${describeType(value)}`,
      `e.g. ${method} = { cache = "ttl", ttl_ms = 200, coalesce = true }`,
    );
    return undefined;
  }
  const r = new FieldReader(value, file, path, problems);
  const cache = readRule(r, method, path, file, problems);
  const ttlMs = r.integer('ttl_ms', {
    min: 1,
    max: 86_400_000,
    required: false,
    hint: 'how long a "ttl" answer is reused, in ms',
  });
  const coalesce = value.coalesce === undefined ? undefined : r.boolean('coalesce', false);
  r.rejectUnknown(METHOD_KEYS);
  if (WRITE_METHODS.has(method) && ((cache ?? 'never') !== 'never' || coalesce === true)) {
    problems.error(
      file,
      path,
      `${method} changes state: it is never cached or coalesced`,
      `remove [${path}]`,
    );
    return undefined;
  }
  const effective = cache ?? SHIPPED_CACHE_RULES.get(method)?.cache ?? 'never';
  if (ttlMs !== undefined && effective !== 'ttl') {
    problems.error(file, `${path}.ttl_ms`, 'only a "ttl" rule has a TTL', 'add cache = "ttl"');
  }
  return {
    ...(cache === undefined ? {} : { cache }),
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(coalesce === undefined ? {} : { coalesce }),
  };
}

function readMethods(
  table: Table,
  file: string,
  r: FieldReader,
  problems: ProblemList,
): Map<string, CacheMethodOverride> {
  r.accept('methods');
  const methods = new Map<string, CacheMethodOverride>();
  const value = table.methods;
  if (value === undefined) return methods;
  if (!isTable(value)) {
    problems.error(
      file,
      'cache.methods',
      `must be a table, got ${describeType(value)}`,
      'write [cache.methods] with one line per method, e.g. getSlot = { ttl_ms = 200 }',
    );
    return methods;
  }
  for (const [method, entry] of Object.entries(value)) {
    const override = readMethod(method, entry, file, problems);
    if (override !== undefined) methods.set(method, override);
  }
  return methods;
}

/** Validates `[cache]`; undefined when the table is absent (coalescing on, cache off). */
export function readCacheSection(
  doc: Table,
  file: string,
  problems: ProblemList,
): CacheConfig | undefined {
  const section = doc.cache;
  if (section === undefined) return undefined;
  if (!isTable(section)) {
    problems.error(file, 'cache', `must be a table, got ${describeType(section)}`, 'write [cache]');
    return undefined;
  }
  const r = new FieldReader(section, file, 'cache', problems);
  const maxBytes = r.integer('max_bytes', {
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    required: false,
    hint: `memory bound of the cache in bytes, e.g. 67108864 for 64 MiB (default ${DEFAULT_CACHE_MAX_BYTES})`,
  });
  const maxEntryBytes = r.integer('max_entry_bytes', {
    min: 1,
    max: 64 * 1024 * 1024,
    required: false,
    hint: `answers bigger than this are not stored (default ${DEFAULT_CACHE_MAX_ENTRY_BYTES})`,
  });
  const ttlMs = r.integer('ttl_ms', {
    min: 1,
    max: 86_400_000,
    required: false,
    hint: `TTL of head-tracking reads in ms; keep it under one slot or block (default ${DEFAULT_CACHE_TTL_MS})`,
  });
  const evmFinalityDepth = r.integer('evm_finality_depth', {
    min: 1,
    max: 1_000_000,
    required: false,
    hint: 'blocks below the newest eth_blockNumber treated as final; omit it to trust only the "finalized" tag',
  });
  const config: CacheConfig = {
    enabled: r.boolean('enabled', true),
    coalesce: r.boolean('coalesce', true),
    maxBytes: maxBytes ?? DEFAULT_CACHE_MAX_BYTES,
    maxEntryBytes: maxEntryBytes ?? DEFAULT_CACHE_MAX_ENTRY_BYTES,
    ttlMs: ttlMs ?? DEFAULT_CACHE_TTL_MS,
    evmFinalityDepth,
    responseHeader: r.boolean('response_header', false),
    methods: readMethods(section, file, r, problems),
  };
  r.rejectUnknown(CACHE_KEYS);
  return config;
}
