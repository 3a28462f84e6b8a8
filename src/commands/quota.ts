import path from 'node:path';
import {
  UsageError,
  accountQuotaReport,
  accountUsageName,
  fetchQuota,
  loadDotEnv,
  quotaReport,
  readQuotaFile,
  readServerLock,
  readSharedKeyChanges,
  readSharedUsage,
  resetSharedUsage,
  resetQuotaFile,
  resetThroughServer,
  type Config,
  type QuotaRow,
  type AccountQuotaRow,
  type KeyRow,
  type QuotaSnapshot,
} from '../core/index.js';
import { renderKeyRows } from './key-admin.js';
import {
  POOL_COLUMNS,
  accountsToReset,
  describeTargets,
  poolCells,
  renderAccountRows,
} from './quota-accounts.js';
import { keyRows, keyRowsFromSnapshot, resetKey } from './quota-keys.js';
import type { CommandIo, ExitCode } from './io.js';
import { configSource, loadOrFail as loadConfigOrFail } from './load-or-fail.js';
import { formatCredits, renderJson, renderTable } from './output.js';

/** Flags shared by `quota show` and `quota reset`. */
export interface QuotaOptions {
  readonly config?: string | undefined;
  readonly quotas?: string | undefined;
  readonly json?: boolean | undefined;
}

/** Flags of `quota reset`. */
export interface QuotaResetOptions extends QuotaOptions {
  readonly all?: boolean | undefined;
  readonly yes?: boolean | undefined;
  /** `--key NAME…`: client keys instead of nodes. */
  readonly key?: readonly string[] | undefined;
  /** `--account NAME…`: provider accounts' pools (with or besides nodes). */
  readonly account?: readonly string[] | undefined;
}

/** Where the numbers came from. */
type Source =
  | { kind: 'server'; pid: number }
  | { kind: 'file'; note: string | undefined }
  | { kind: 'redis'; url: string };

function loadOrFail(options: QuotaOptions, io: CommandIo): { config: Config; quotasPath: string } {
  loadDotEnv(io.cwd, io.env);
  const source = { ...configSource(options.config, io), keySecretsOptional: true };
  const config = loadConfigOrFail(source, io, 'nothing was read');
  return { config, quotasPath: path.resolve(io.cwd, options.quotas ?? config.server.quotasPath) };
}

/**
 * A node's POOL_COLUMNS cells; one billed to an account without a limit of its own shows the
 * account in the limit columns (its usage still counts there: see the accounts' table).
 */
function nodeCells(row: QuotaRow & { readonly account?: string }): string[] {
  const cells = poolCells(row);
  if (row.account === undefined || row.monthly_limit !== null) return cells;
  const pool = `account ${row.account}`;
  cells[1] = pool;
  cells[2] = pool;
  cells[3] = `see ${pool}`;
  return cells;
}

/** What the report shows: the nodes' rows, the accounts' (empty: none configured), the keys'. */
interface Rows {
  readonly nodes: readonly QuotaRow[];
  readonly accounts?: readonly AccountQuotaRow[] | undefined;
  readonly keys?: readonly KeyRow[];
}

/** The rows of the config's nodes and accounts from `usage` (a file's or Redis' snapshot). */
function rowsFrom(config: Config, usage: QuotaSnapshot): Rows {
  const read = (name: string) => usage.get(name);
  return {
    nodes: quotaReport(config.nodes, read, new Date()),
    accounts: accountQuotaReport(config.accounts ?? [], config.nodes, read, new Date()),
  };
}

function describeSource(source: Source, quotasPath: string): string {
  if (source.kind === 'server') return `live numbers from the running server (pid ${source.pid})`;
  if (source.kind === 'redis') return `the fleet's usage, read from Redis at ${source.url}`;
  return `read from ${quotasPath}${source.note ? ` — ${source.note}` : ''}`;
}

function render(
  rows: Rows,
  source: Source,
  quotasPath: string,
  io: CommandIo,
  json: boolean | undefined,
): void {
  const { accounts = [], keys = [] } = rows;
  // A node billed to a provider account spills over on the account's pool, not a limit of its own.
  const billedTo = new Map(accounts.flatMap((pool) => pool.nodes.map((node) => [node, pool.name])));
  const nodes = rows.nodes.map((row) => {
    const account = billedTo.get(row.name);
    return account === undefined ? row : { ...row, account };
  });
  if (json) {
    io.out(
      renderJson({
        source: source.kind,
        file: quotasPath,
        ...(source.kind === 'server' ? { pid: source.pid } : {}),
        nodes,
        ...(accounts.length > 0 ? { accounts } : {}),
        ...(keys.length > 0 ? { keys } : {}),
      }),
    );
    return;
  }
  io.out(
    renderTable(
      ['node', 'tier', ...POOL_COLUMNS],
      nodes.map((row) => [row.name, String(row.tier), ...nodeCells(row)]),
    ),
  );
  io.out(savedLine(nodes));
  if (accounts.length > 0) io.out(renderAccountRows(accounts));
  if (keys.length > 0) io.out(renderKeyRows(keys));
  io.out(describeSource(source, quotasPath));
}

/** One line on what the response cache and in-flight coalescing saved this period. */
function savedLine(rows: readonly QuotaRow[]): string {
  // A server of an older version sends rows without `saved`.
  const saved = rows.filter((row) => (row.saved ?? 0) > 0);
  const total = saved.reduce((sum, row) => sum + row.saved, 0);
  const split = saved.map((row) => `${row.name} ${formatCredits(row.saved)}`).join(', ');
  return `cache and coalescing saved ${formatCredits(total)} credits this period${split ? ` (${split})` : ''}`;
}

/** `cascade quota show`: per-node usage, live from a running server when one is reachable. */
export async function runQuotaShow(options: QuotaOptions, io: CommandIo): Promise<ExitCode> {
  const { config, quotasPath } = loadOrFail(options, io);
  const lock = readServerLock(quotasPath);
  if (lock?.adminPort) {
    const doc = await fetchQuota(lock);
    const keys = await keyRows(config, quotasPath, lock.adminPort);
    render({ ...doc, keys }, { kind: 'server', pid: lock.pid }, quotasPath, io, options.json);
    return 0;
  }
  if (lock === undefined && config.cluster?.redisUrl !== undefined) {
    const usage = await readSharedUsage(config, new Date());
    const changes = config.keys === undefined ? undefined : await readSharedKeyChanges(config);
    render(
      { ...rowsFrom(config, usage), keys: keyRowsFromSnapshot(config, usage, changes) },
      { kind: 'redis', url: config.cluster.redactedRedisUrl! },
      quotasPath,
      io,
      options.json,
    );
    return 0;
  }
  const where = lock?.local === false ? ` on host ${lock.host}` : '';
  const why = lock?.local === false ? 'on another host' : 'running without server.admin_port';
  const note = lock
    ? `a server (pid ${lock.pid}${where}) is ${why}, so these are its last flush (up to ${config.server.quotaFlushSeconds} s old)`
    : undefined;
  render(
    {
      ...rowsFrom(config, await readQuotaFile(quotasPath)),
      keys: await keyRows(config, quotasPath, undefined),
    },
    { kind: 'file', note },
    quotasPath,
    io,
    options.json,
  );
  return 0;
}

function namesToReset(
  names: readonly string[],
  options: QuotaResetOptions,
  config: Config,
): string[] {
  const known = config.nodes.map((node) => node.name);
  if (options.all && (names.length > 0 || options.account !== undefined))
    throw new UsageError('give node names or accounts, or --all, not both');
  if (options.all) {
    if (!options.yes)
      throw new UsageError('--all zeroes the usage of every node', 'add --yes to confirm');
    return known;
  }
  if (names.length === 0 && options.account !== undefined) return [];
  if (names.length === 0)
    throw new UsageError(
      'name the nodes to reset, or pass --all --yes',
      `known nodes: ${known.join(', ')}`,
    );
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown node(s): ${unknown.join(', ')}`,
      `known nodes: ${known.join(', ')}`,
    );
  return [...new Set(names)];
}

/** `cascade quota reset --key NAME`: zero a client key's usage (server, or file). */
async function resetKeys(
  names: readonly string[],
  options: QuotaResetOptions,
  config: Config,
  quotasPath: string,
  io: CommandIo,
): Promise<ExitCode> {
  if (names.length > 0 || options.all || options.account !== undefined)
    throw new UsageError('give --key NAME alone: nodes and keys are reset separately');
  const lock = readServerLock(quotasPath);
  if (lock && (!lock.local || !lock.adminPort))
    throw new UsageError(
      `a cascade server (pid ${lock.pid}) is using ${quotasPath} without an admin listener here; its next flush would undo a reset of the file`,
      'set server.admin_port and restart it (resets then go through the server), or stop it first',
    );
  // Every name is checked before anything is reset: a typo must not leave half the list done.
  const known = (config.keys?.keys ?? []).map((key) => key.name);
  const unknown = [...new Set(options.key)].filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown key(s): ${unknown.join(', ')}; nothing was reset`,
      `known keys: ${known.join(', ') || 'none'} (--key takes every name after it: put node names first)`,
    );
  const rows: KeyRow[] = [];
  for (const name of new Set(options.key)) {
    const { row, where } = await resetKey(config, quotasPath, name, lock?.adminPort);
    if (!options.json) io.out(`reset key ${name} ${where}`);
    rows.push(row);
  }
  io.out(options.json ? renderJson({ keys: rows }) : renderKeyRows(rows));
  return 0;
}

/** `cascade quota reset NODE… | --all --yes`: zero usage, through the server when one runs. */
export async function runQuotaReset(
  names: readonly string[],
  options: QuotaResetOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const { config, quotasPath } = loadOrFail(options, io);
  if (options.key !== undefined) return resetKeys(names, options, config, quotasPath, io);
  const targets = namesToReset(names, options, config);
  const all = options.all === true;
  const pools = all
    ? (config.accounts ?? []).map((account) => account.name)
    : accountsToReset(config, options.account);
  const what = describeTargets(targets, pools);
  const lock = readServerLock(quotasPath);
  if (lock && !lock.local) {
    throw new UsageError(
      `a cascade server (pid ${lock.pid} on host ${lock.host}) is using ${quotasPath}; its next flush would undo a reset of the file`,
      `run the reset on ${lock.host}, or stop that server first`,
    );
  }
  if (lock && !lock.adminPort) {
    throw new UsageError(
      `a cascade server (pid ${lock.pid}) is using ${quotasPath}; its next flush would undo a reset of the file`,
      'set server.admin_port and restart it (resets then go through the server), or stop it first',
    );
  }
  if (lock) {
    const doc = await resetThroughServer(lock, all ? 'all' : { nodes: targets, accounts: pools });
    if (!options.json) io.out(`reset ${what} through the running server (pid ${lock.pid})`);
    render(doc, { kind: 'server', pid: lock.pid }, quotasPath, io, options.json);
    return 0;
  }
  if (config.cluster?.redisUrl !== undefined) {
    await resetSharedUsage(config, [...targets, ...pools.map(accountUsageName)], new Date());
    if (!options.json) io.out(`reset ${what} for every replica (in Redis)`);
  }
  const rows = await resetQuotaFile(
    quotasPath,
    config.nodes,
    targets,
    all,
    config.accounts ?? [],
    pools,
  );
  if (!options.json) io.out(`reset ${what} in ${quotasPath}`);
  render(rows, { kind: 'file', note: undefined }, quotasPath, io, options.json);
  return 0;
}
