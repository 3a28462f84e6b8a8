/**
 * Provider price lists: `[limits]`, `[routing]` (standard names only) and `[custom]` (any name),
 * compiled once into a flat Uint32Array indexed by method id so pricing an attempt is one load.
 * A method the list does not name costs `unknown_method_cost`, or is not served at all when the
 * list has none — whatever order methods were interned in.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { parse } from 'smol-toml';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { closestMatch } from './did-you-mean.js';
import type { ProblemList } from './problem-list.js';
import { readLogsLimitFields, type LogsLimitFields } from './logs-limit-fields.js';
import { FieldReader, describeType, isTable } from './toml-fields.js';
import { UNPRICED, type PriceList, type PriceSource, type WsPrices } from './types.js';

const MAX_PRICE = UNPRICED - 1;
const TOP_KEYS = ['limits', 'routing', 'custom', 'websocket'] as const;
const LIMIT_KEYS = [
  'spillover_percent',
  'unknown_method_cost',
  'max_logs_block_range',
  'max_logs_results',
] as const;
const WS_KEYS = ['connection', 'subscribe', 'unsubscribe', 'notification', 'tenth_mb'] as const;

/** The price of method `id` under `list`, or UNPRICED. */
export function priceOf(list: PriceList, id: number): number {
  if (id >= 0 && id < list.table.length) return list.table[id]!;
  return list.unknownMethodCost ?? UNPRICED;
}

/** Where a method's price comes from, or undefined when the list does not serve it. */
export function priceSourceOf(list: PriceList, method: string): PriceSource | undefined {
  const named = list.named.get(method);
  if (named) return named.source;
  return list.unknownMethodCost === undefined ? undefined : 'unknown_method_cost';
}

function readPrice(
  value: unknown,
  file: string,
  path: string,
  problems: ProblemList,
): number | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_PRICE) {
    problems.error(
      file,
      path,
      `must be a whole number of credits from 0 to ${MAX_PRICE}, got ${describeType(value)}`,
      '0 means free; remove the line to stop pricing the method',
    );
    return undefined;
  }
  return value;
}

function readSection(
  section: unknown,
  name: 'routing' | 'custom',
  file: string,
  problems: ProblemList,
): Array<[string, number]> {
  if (section === undefined) return [];
  if (!isTable(section)) {
    problems.error(file, name, `must be a table, got ${describeType(section)}`, `write [${name}]`);
    return [];
  }
  const entries: Array<[string, number]> = [];
  for (const [method, value] of Object.entries(section)) {
    const price = readPrice(value, file, `${name}.${method}`, problems);
    if (price !== undefined) entries.push([method, price]);
  }
  return entries;
}

/** `[websocket]`: every key optional (0 credits), each a whole number of credits. */
function readWsPrices(section: unknown, file: string, problems: ProblemList): WsPrices | undefined {
  if (section === undefined) return undefined;
  if (!isTable(section)) {
    problems.error(
      file,
      'websocket',
      `must be a table, got ${describeType(section)}`,
      'write [websocket]',
    );
    return undefined;
  }
  const reader = new FieldReader(section, file, 'websocket', problems);
  const price = (key: (typeof WS_KEYS)[number], what: string): number =>
    reader.integer(key, {
      min: 0,
      max: MAX_PRICE,
      required: false,
      hint: `credits ${what}; omit the key for 0`,
    }) ?? 0;
  const prices: WsPrices = {
    connection: price('connection', 'per upstream WebSocket connection opened'),
    subscribe: price('subscribe', 'per subscribe call'),
    unsubscribe: price('unsubscribe', 'per unsubscribe call'),
    notification: price('notification', 'per notification received'),
    tenthMb: price('tenth_mb', 'per 0.1 MB (100,000 bytes) received'),
  };
  reader.rejectUnknown(WS_KEYS);
  return prices;
}

/** Parses and compiles one price list. Problems go to `problems`; returns undefined on errors. */
export function loadPriceList(
  absolutePath: string,
  configuredPath: string,
  registry: MethodRegistry,
  problems: ProblemList,
): PriceList | undefined {
  let text: string;
  try {
    text = readFileSync(absolutePath, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : String(err);
    const relative = !isAbsolute(configuredPath);
    problems.error(
      absolutePath,
      '',
      `cannot read price list: ${reason}`,
      relative
        ? `provider_pricing_path "${configuredPath}" is relative, so it is read from the working directory; start cascade from the directory it is relative to, or write an absolute path`
        : 'check provider_pricing_path',
    );
    return undefined;
  }
  let doc: Record<string, unknown>;
  try {
    doc = parse(text, { integersAsBigInt: 'asNeeded' });
  } catch (err) {
    problems.error(absolutePath, '', `not valid TOML: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
  const before = problems.errors.length;
  const top = new FieldReader(doc, absolutePath, '', problems);
  for (const key of TOP_KEYS) top.accept(key);
  top.rejectUnknown(TOP_KEYS);

  let spilloverPercent = 95;
  let unknownMethodCost: number | undefined;
  let logs: LogsLimitFields = {};
  const limits = doc.limits;
  if (limits !== undefined && !isTable(limits)) {
    problems.error(absolutePath, 'limits', `must be a table, got ${describeType(limits)}`);
  } else if (limits !== undefined) {
    const reader = new FieldReader(limits, absolutePath, 'limits', problems);
    spilloverPercent =
      reader.integer('spillover_percent', {
        min: 1,
        max: 100,
        required: false,
        hint: 'the share of monthly_limit to spend before spilling over, e.g. 95',
        outOfRange: (percent) => `spillover_percent must be in 1..=100, got ${percent}`,
      }) ?? 95;
    unknownMethodCost = reader.integer('unknown_method_cost', {
      min: 0,
      max: MAX_PRICE,
      required: false,
      hint: 'omit the key to skip this node for methods the list does not name',
    });
    logs = readLogsLimitFields(reader);
    reader.rejectUnknown(LIMIT_KEYS);
  }
  if (doc.routing === undefined) {
    problems.error(
      absolutePath,
      'routing',
      'the [routing] table is missing',
      'add [routing] (it may be empty)',
    );
  }
  const routing = readSection(doc.routing, 'routing', absolutePath, problems);
  const custom = readSection(doc.custom, 'custom', absolutePath, problems);
  const websocket = readWsPrices(doc.websocket, absolutePath, problems);
  if (problems.errors.length > before) return undefined;

  const named = new Map<string, { cost: number; source: PriceSource }>();
  for (const [method, cost] of routing) {
    if (registry.isStandard(method)) {
      named.set(method, { cost, source: 'routing' });
    } else if (method === 'Unknown') {
      problems.warn(
        absolutePath,
        `routing.${method}`,
        'is not a method and prices nothing',
        'set unknown_method_cost under [limits] instead',
      );
    } else {
      const guess = closestMatch(method, registry.standardNames());
      problems.warn(
        absolutePath,
        `routing.${method}`,
        'is not a standard method name, so it prices nothing',
        guess
          ? `did you mean '${guess}'? Provider-specific methods go under [custom]`
          : 'provider-specific methods go under [custom]',
      );
    }
  }
  for (const [method, cost] of custom) {
    if (registry.isStandard(method)) {
      problems.warn(
        absolutePath,
        `custom.${method}`,
        'is a standard method; [custom] cannot price it',
        'move it to [routing]',
      );
      continue;
    }
    registry.intern(method);
    named.set(method, { cost, source: 'custom' });
  }
  const table = new Uint32Array(registry.size).fill(unknownMethodCost ?? UNPRICED);
  for (const [method, { cost }] of named) table[registry.idOf(method)] = cost;
  return {
    path: absolutePath,
    configuredPath,
    spilloverPercent,
    unknownMethodCost,
    table,
    named,
    websocket,
    ...logs,
  };
}
