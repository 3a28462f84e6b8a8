import { readLogsLimitFields } from './logs-limit-fields.js';
import type { ProblemList } from './problem-list.js';
import { readNodeHeaders } from './node-headers.js';
import { isPlainRemote, readNodeUrl } from './node-url.js';
import { FieldReader, type Table } from './toml-fields.js';

/** At most this many nodes: the routing table stays small enough to walk on every request. */
export const MAX_NODES = 64;
/** Connections per node when `max_connections` is not set. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** How long an idle pooled connection may be reused when `keep_alive_ms` is not set. */
export const DEFAULT_KEEP_ALIVE_MS = 30_000;
const U32_MAX = 0xffffffff;

const NODE_KEYS = [
  'name',
  'url',
  'tier',
  'rps_limit',
  'max_concurrent',
  'max_connections',
  'keep_alive_ms',
  'monthly_limit',
  'reset_day',
  'provider_pricing_path',
  'ws_url',
  'headers',
  'head_probe_seconds',
  'account',
  'max_logs_block_range',
  'max_logs_results',
] as const;

/** A node entry after its own fields are checked, before its price list is loaded. */
export interface NodeFields {
  readonly name: string;
  readonly url: string;
  readonly redactedUrl: string;
  readonly wsUrl: string | undefined;
  readonly redactedWsUrl: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly tier: number;
  readonly rpsLimit: number;
  readonly maxConcurrent: number;
  readonly maxConnections: number;
  readonly keepAliveMs: number;
  readonly monthlyLimit: number | undefined;
  readonly resetDay: number;
  readonly providerPricingPath: string;
  /** Ask the node its head every this many seconds (priced like any call); absent: never. */
  readonly headProbeSeconds?: number;
  /** The `[[accounts]]` entry it bills to; absent: none. */
  readonly account?: string;
  /** eth_getLogs limits of this node (over its price list's); absent: the list's. */
  readonly maxLogsBlockRange?: number;
  readonly maxLogsResults?: number;
}

/** A node entry's name and account as written, and where it is (`chains[1].nodes[0]`). */
export interface NamedNode {
  readonly name: string | undefined;
  readonly account: string | undefined;
  readonly where: string;
}

/** One node entry read: its fields when all are valid, and its price list's path if readable. */
export interface NodeEntry {
  /** The name as written (even when other fields are wrong), for the uniqueness check. */
  readonly name: string | undefined;
  /** The `account` as written (even when other fields are wrong), for the account links. */
  readonly account: string | undefined;
  readonly fields: NodeFields | undefined;
  /** Read even when other fields are wrong, so the price list's problems are reported too. */
  readonly providerPricingPath: string | undefined;
}

/** Validates one `[[nodes]]` entry's own fields (`fields` is undefined when any is wrong). */
export function readNodeFields(
  table: Table,
  index: number,
  env: NodeJS.ProcessEnv,
  file: string,
  problems: ProblemList,
): NodeEntry {
  const before = problems.errors.length;
  const prefix = `nodes[${index}]`;
  const r = new FieldReader(table, file, prefix, problems);
  const name = r.string(
    'name',
    true,
    'every node needs a unique name; quotas and metrics are keyed by it',
  );
  const label = name ?? `#${index}`;
  const urls = readNodeUrl(
    r.string('url', true, 'e.g. url = "https://host/?api-key=$API_KEY"'),
    label,
    env,
    {
      file,
      path: `${prefix}.url`,
      problems,
    },
  );
  const wsUrls = readNodeUrl(
    r.string(
      'ws_url',
      false,
      'e.g. ws_url = "wss://host/?api-key=$API_KEY"; omit it to derive it from url',
    ),
    label,
    env,
    { file, path: `${prefix}.ws_url`, problems },
    'ws',
  );
  const tier = r.integer('tier', {
    min: 0,
    max: 255,
    required: true,
    hint: '0 is the highest priority',
  });
  const rpsValue = table.rps_limit;
  if (rpsValue === 0) {
    r.accept('rps_limit');
    problems.error(
      file,
      `${prefix}.rps_limit`,
      `RPS for node '${label}' cannot be 0`,
      'set the provider rate limit in requests per second; omit the key for no limit',
    );
  }
  const rpsLimit =
    rpsValue === 0
      ? undefined
      : r.integer('rps_limit', {
          min: 1,
          max: U32_MAX,
          required: false,
          hint: 'requests per second; omit the key for no limit',
        });
  const maxConcurrent = r.integer('max_concurrent', {
    min: 0,
    max: U32_MAX,
    required: false,
    hint: 'requests in flight at once; omit the key for no limit',
  });
  const maxConnections = r.integer('max_connections', {
    min: 1,
    max: 65_535,
    required: false,
    hint: `connections open to the node at once; when all are busy the node is skipped as saturated (default ${DEFAULT_MAX_CONNECTIONS})`,
  });
  const keepAliveMs = r.integer('keep_alive_ms', {
    min: 0,
    max: 3_600_000,
    required: false,
    hint: `ms an idle connection may be reused; keep it below the provider's idle timeout (default ${DEFAULT_KEEP_ALIVE_MS})`,
  });
  const headProbeSeconds = r.integer('head_probe_seconds', {
    min: 1,
    max: 86_400,
    required: false,
    hint: 'seconds between head probes (one getSlot / eth_blockNumber, booked like any call); off by default — heads come from traffic',
  });
  const account = r.string(
    'account',
    false,
    'the name of an [[accounts]] entry whose credit pool and limits this node shares',
  );
  // A node of an account is metered by the account; its own monthly_limit is then optional.
  const logs = readLogsLimitFields(r);
  const monthly = r.integer('monthly_limit', {
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    required: account === undefined,
    hint: 'credits per billing period; 0 means unmetered',
  });
  const resetDay = r.integer('reset_day', {
    min: 1,
    max: 31,
    required: false,
    hint: "the day of the month usage resets; a day past a short month's end means its last day",
    outOfRange: (day) => `reset_day for node '${label}' must be 1..=31, got ${day}`,
  });
  const pricing = r.string(
    'provider_pricing_path',
    true,
    'path of the provider price list, e.g. "config/provider_config/helius.toml"',
  );
  r.accept('headers');
  const headers = readNodeHeaders(table.headers, env, {
    file,
    path: `${prefix}.headers`,
    label,
    urlHasCredentials: urls?.hasCredentials ?? false,
    problems,
  });
  r.rejectUnknown(NODE_KEYS);
  if (headers && Object.keys(headers).length > 0 && urls && isPlainRemote(new URL(urls.url))) {
    problems.warn(
      file,
      `${prefix}.headers`,
      `node '${label}' sends its headers (API keys?) over plain http`,
      'use https://',
    );
  }
  if (name !== undefined && name.trim() === '') {
    problems.error(file, `${prefix}.name`, 'must not be empty', 'give the node a unique name');
  }
  if (maxConcurrent === 0) {
    problems.warn(
      file,
      `${prefix}.max_concurrent`,
      `node '${label}' can never be used with max_concurrent = 0`,
      'set it to at least 1, or remove the node',
    );
  }
  if (
    problems.errors.length > before ||
    !name ||
    !urls ||
    !headers ||
    tier === undefined ||
    (monthly === undefined && account === undefined) ||
    !pricing
  ) {
    return { name, account, fields: undefined, providerPricingPath: pricing || undefined };
  }
  const fields: NodeFields = {
    name,
    url: urls.url,
    redactedUrl: urls.redactedUrl,
    wsUrl: wsUrls?.url,
    redactedWsUrl: wsUrls?.redactedUrl,
    headers,
    tier,
    rpsLimit: rpsLimit ?? Infinity,
    maxConcurrent: maxConcurrent ?? Infinity,
    maxConnections: maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    keepAliveMs: keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    monthlyLimit: monthly === 0 ? undefined : monthly,
    ...(account === undefined ? {} : { account }),
    resetDay: resetDay ?? 1,
    providerPricingPath: pricing,
    ...(headProbeSeconds === undefined ? {} : { headProbeSeconds }),
    ...logs,
  };
  return { name, account, fields, providerPricingPath: pricing };
}
