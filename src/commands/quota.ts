import path from 'node:path';
import {
  ConfigError,
  QuotaFileError,
  UsageError,
  formatProblem,
  loadConfig,
  loadDotEnv,
  periodStart,
  quotaReport,
  readQuotaFile,
  readServerLock,
  utcDay,
  writeQuotaFile,
  type Config,
  type QuotaRow,
  type QuotaSnapshot,
  type ServerLock,
} from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';
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
}

/** Where the numbers came from. */
type Source = { kind: 'server'; pid: number } | { kind: 'file'; note: string | undefined };

const ADMIN_TIMEOUT_MS = 2000;

function loadOrFail(options: QuotaOptions, io: CommandIo): { config: Config; quotasPath: string } {
  loadDotEnv(io.cwd, io.env);
  const result = loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd });
  if (!result.config) {
    for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
    throw new ConfigError(
      `${result.path}: fix the config first`,
      [],
      '`cascade validate-config` lists every problem',
    );
  }
  const quotasPath = path.resolve(io.cwd, options.quotas ?? result.config.server.quotasPath);
  return { config: result.config, quotasPath };
}

async function admin(
  lock: ServerLock,
  route: string,
  body?: unknown,
): Promise<{ nodes: QuotaRow[] }> {
  const response = await fetch(`http://127.0.0.1:${lock.adminPort}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
  });
  const parsed = (await response.json()) as { nodes?: QuotaRow[]; error?: string };
  if (!response.ok || !parsed.nodes)
    throw new UsageError(`the running server refused: ${parsed.error ?? response.status}`);
  return { nodes: parsed.nodes };
}

function fileRows(config: Config, snapshot: QuotaSnapshot): QuotaRow[] {
  return quotaReport(config.nodes, (name) => snapshot.get(name), new Date());
}

function bar(percent: number | null): string {
  if (percent === null) return 'unmetered';
  const filled = Math.max(0, Math.min(20, Math.round(percent / 5)));
  return `${'█'.repeat(filled)}${'░'.repeat(20 - filled)} ${percent.toFixed(1)}%`;
}

function describeSource(source: Source, quotasPath: string): string {
  return source.kind === 'server'
    ? `live numbers from the running server (pid ${source.pid})`
    : `read from ${quotasPath}${source.note ? ` — ${source.note}` : ''}`;
}

function render(
  rows: readonly QuotaRow[],
  source: Source,
  quotasPath: string,
  io: CommandIo,
  json: boolean | undefined,
): void {
  if (json) {
    io.out(
      renderJson({
        source: source.kind,
        file: quotasPath,
        ...(source.kind === 'server' ? { pid: source.pid } : {}),
        nodes: rows,
      }),
    );
    return;
  }
  io.out(
    renderTable(
      [
        'node',
        'tier',
        'used',
        'spillover at',
        'monthly limit',
        'used of limit',
        'period start',
        'next reset',
        'days left',
      ],
      rows.map((row) => [
        row.name,
        String(row.tier),
        formatCredits(row.used),
        formatCredits(row.threshold ?? undefined),
        formatCredits(row.monthly_limit ?? undefined),
        bar(row.percent_used),
        row.period_start,
        row.next_reset,
        String(row.days_left),
      ]),
    ),
  );
  io.out(describeSource(source, quotasPath));
}

/** `cascade quota show`: per-node usage, live from a running server when one is reachable. */
export async function runQuotaShow(options: QuotaOptions, io: CommandIo): Promise<ExitCode> {
  const { config, quotasPath } = loadOrFail(options, io);
  const lock = readServerLock(quotasPath);
  if (lock?.adminPort) {
    const { nodes } = await admin(lock, '/admin/quota');
    render(nodes, { kind: 'server', pid: lock.pid }, quotasPath, io, options.json);
    return 0;
  }
  const note = lock
    ? `a server (pid ${lock.pid}) is running without server.admin_port, so these are its last flush (up to 60 s old)`
    : undefined;
  render(
    fileRows(config, await readQuotaFile(quotasPath)),
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
  if (options.all && names.length > 0) throw new UsageError('give node names or --all, not both');
  if (options.all) {
    if (!options.yes)
      throw new UsageError('--all zeroes the usage of every node', 'add --yes to confirm');
    return known;
  }
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

async function resetFile(
  quotasPath: string,
  config: Config,
  names: readonly string[],
  all: boolean,
): Promise<QuotaRow[]> {
  let snapshot: QuotaSnapshot;
  try {
    snapshot = await readQuotaFile(quotasPath);
  } catch (err) {
    // --all is the documented way out of a corrupt file: rebuild it from the config.
    if (!(err instanceof QuotaFileError) || !all) throw err;
    snapshot = new Map();
  }
  const today = utcDay(new Date());
  const next = new Map(snapshot);
  for (const node of config.nodes) {
    if (!names.includes(node.name)) continue;
    next.set(node.name, {
      used: 0,
      periodStart: snapshot.get(node.name)?.periodStart ?? periodStart(today, node.resetDay),
    });
  }
  await writeQuotaFile(quotasPath, next);
  return fileRows(config, next);
}

/** `cascade quota reset NODE… | --all --yes`: zero usage, through the server when one runs. */
export async function runQuotaReset(
  names: readonly string[],
  options: QuotaResetOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const { config, quotasPath } = loadOrFail(options, io);
  const targets = namesToReset(names, options, config);
  const lock = readServerLock(quotasPath);
  if (lock && !lock.adminPort) {
    throw new UsageError(
      `a cascade server (pid ${lock.pid}) is using ${quotasPath}; its next flush would undo a reset of the file`,
      'set server.admin_port and restart it (resets then go through the server), or stop it first',
    );
  }
  if (lock) {
    const { nodes } = await admin(
      lock,
      '/admin/quota/reset',
      options.all ? { all: true } : { nodes: targets },
    );
    if (!options.json)
      io.out(`reset ${targets.join(', ')} through the running server (pid ${lock.pid})`);
    render(nodes, { kind: 'server', pid: lock.pid }, quotasPath, io, options.json);
    return 0;
  }
  const rows = await resetFile(quotasPath, config, targets, options.all === true);
  if (!options.json) io.out(`reset ${targets.join(', ')} in ${quotasPath}`);
  render(rows, { kind: 'file', note: undefined }, quotasPath, io, options.json);
  return 0;
}
