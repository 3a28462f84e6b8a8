import path from 'node:path';
import {
  chainOf,
  chainsOf,
  formatProblem,
  loadConfig,
  loadDotEnv,
  type Config,
  type ConfigProblem,
  type LoadResult,
  type NodeConfig,
  wsUrlOf,
} from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { formatCredits, formatLimit, renderJson, renderTable } from './output.js';
import { chainsJson, nodeLinksJson, okSummary, renderChains } from './validate-chains.js';

/** Flags of `cascade validate-config`. */
export interface ValidateConfigOptions {
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
  /** Ask each node its chain (`expect_chain`) and head: one call each, priced by the provider. */
  readonly online?: boolean | undefined;
}

/** What `--online` found on one node. */
interface OnlineRow {
  readonly name: string;
  /** same / other / unknown (could not ask) / unchecked (no expect_chain). */
  readonly chain: 'same' | 'other' | 'unknown' | 'unchecked';
  readonly got: string | null;
  readonly head: number | null;
  readonly error: string | null;
}

const ONLINE_TIMEOUT_MS = 5000;

async function callNode(node: NodeConfig, method: string): Promise<unknown> {
  const response = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...node.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    signal: AbortSignal.timeout(ONLINE_TIMEOUT_MS),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: unknown } };
  if (body.error !== undefined) {
    const message = body.error.message;
    throw new Error(typeof message === 'string' ? message : 'error answer');
  }
  return body.result;
}

function headOf(result: unknown): number | null {
  if (typeof result === 'number' && Number.isSafeInteger(result)) return result;
  if (typeof result === 'string' && /^0x[0-9a-fA-F]{1,13}$/.test(result)) return Number(result);
  return null;
}

/** One node: its chain against `expect` (EVM chain id or Solana genesis hash) and its head. */
async function checkNode(node: NodeConfig, expect: string | undefined): Promise<OnlineRow> {
  const evmId = expect !== undefined && /^(0x[0-9a-fA-F]+|\d+)$/.test(expect.trim());
  let chain: OnlineRow['chain'] = 'unchecked';
  let got: string | null = null;
  let error: string | null = null;
  if (expect !== undefined) {
    try {
      const result = await callNode(node, evmId ? 'eth_chainId' : 'getGenesisHash');
      got = evmId ? String(BigInt(String(result))) : String(result);
      const want = evmId ? String(BigInt(expect.trim())) : expect.trim();
      chain = got === want ? 'same' : 'other';
    } catch (err) {
      chain = 'unknown';
      error = (err as Error).message;
    }
  }
  const methods =
    expect === undefined ? ['getSlot', 'eth_blockNumber'] : [evmId ? 'eth_blockNumber' : 'getSlot'];
  let head: number | null = null;
  for (const method of methods) {
    try {
      head = headOf(await callNode(node, method));
      if (head !== null) break;
    } catch (err) {
      error ??= (err as Error).message;
    }
  }
  return { name: node.name, chain, got, head, error };
}

function renderOnline(rows: readonly OnlineRow[]): string {
  const table = renderTable(
    ['node', 'chain', 'head', 'note'],
    rows.map((row) => [
      row.name,
      row.chain === 'other' ? `other (${row.got})` : row.chain,
      row.head === null ? '-' : String(row.head),
      row.error ?? '',
    ]),
  );
  return `${table}\n`;
}

function methodsPriced(node: NodeConfig): string {
  const named = node.pricing.named.size;
  const fallback = node.pricing.unknownMethodCost;
  return fallback === undefined ? `${named}` : `${named} + others at ${fallback}`;
}

function nodeJson(node: NodeConfig, cwd: string) {
  return {
    name: node.name,
    tier: node.tier,
    ...nodeLinksJson(node),
    url: node.redactedUrl,
    ws_url: wsUrlOf(node).redacted,
    rps_limit: node.rpsLimit === Infinity ? null : node.rpsLimit,
    max_concurrent: node.maxConcurrent === Infinity ? null : node.maxConcurrent,
    monthly_limit: node.monthlyLimit ?? null,
    spillover_threshold: node.spilloverThreshold === Infinity ? null : node.spilloverThreshold,
    reset_day: node.resetDay,
    price_list: path.relative(cwd, node.pricing.path) || node.pricing.path,
    methods_priced: node.pricing.named.size,
    unknown_method_cost: node.pricing.unknownMethodCost ?? null,
  };
}

/** A problem for --json: always the same four keys (`hint` null when there is none). */
function problemJson(problem: ConfigProblem) {
  return {
    file: problem.file,
    path: problem.path,
    message: problem.message,
    hint: problem.hint ?? null,
  };
}

/**
 * The monthly limit and spillover columns: a node billed to an account without a limit of its
 * own spends the account's pool (the accounts table), which is not "unmetered".
 */
function creditColumns(node: Config['nodes'][number]): [string, string] {
  if (node.account !== undefined && node.monthlyLimit === undefined)
    return [`account ${node.account}`, `account ${node.account}`];
  return [formatCredits(node.monthlyLimit), formatCredits(node.spilloverThreshold)];
}

/** The node table; with `[[chains]]` a chain column, with accounts an account column. */
function nodeTable(config: Config, cwd: string): string {
  const chains = config.chains !== undefined;
  const accounts = config.nodes.some((node) => node.account !== undefined);
  const head = [
    'node',
    'tier',
    'url',
    'rps',
    'max concurrent',
    'monthly limit',
    'spillover at',
    'reset day',
    'price list',
    'methods priced',
  ];
  const links = [...(chains ? ['chain'] : []), ...(accounts ? ['account'] : [])];
  head.splice(1, 0, ...links);
  const rows = config.nodes.map((node) => [
    node.name,
    ...(chains ? [chainOf(node)] : []),
    ...(accounts ? [node.account ?? '—'] : []),
    String(node.tier),
    node.redactedUrl,
    formatLimit(node.rpsLimit),
    formatLimit(node.maxConcurrent),
    ...creditColumns(node),
    String(node.resetDay),
    path.relative(cwd, node.pricing.path) || node.pricing.path,
    methodsPriced(node),
  ]);
  return renderTable(head, rows);
}

/** Renders the result for people. */
export function renderValidation(result: LoadResult, cwd: string): string {
  const lines: string[] = [];
  for (const problem of result.errors) lines.push(`error: ${formatProblem(problem)}`);
  for (const problem of result.warnings) lines.push(`warning: ${formatProblem(problem)}`);
  if (result.config) {
    const config = result.config;
    lines.push(nodeTable(config, cwd), ...renderChains(config));
    lines.push(`${result.path}: ${okSummary(config)}`);
  } else {
    lines.push(`${result.path}: ${result.errors.length} problem(s); nothing was started`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `cascade validate-config`: load config + price lists, print problems or the node table;
 * with `--online`, also each node's chain identity (`expect_chain`) and head — exit 1 when a
 * node is on another chain.
 */
export function runValidateConfig(
  options: ValidateConfigOptions,
  io: CommandIo,
): ExitCode | Promise<ExitCode> {
  const { code, config, json } = runOffline(options, io);
  if (!options.online || code !== 0 || config === undefined) {
    if (json !== undefined) io.out(renderJson(json));
    return code;
  }
  // Each node is checked against its own chain's expect_chain.
  const expected = new Map(chainsOf(config).map((chain) => [chain.name, chain.lag?.expectChain]));
  const checks = config.nodes.map((node) => checkNode(node, expected.get(chainOf(node))));
  return Promise.all(checks).then((rows) => {
    // --json stays one document: the offline report with `online` added.
    if (json !== undefined) io.out(renderJson({ ...json, online: rows }));
    else io.out(renderOnline(rows));
    return rows.some((row) => row.chain === 'other') ? 1 : 0;
  });
}

function runOffline(
  options: ValidateConfigOptions,
  io: CommandIo,
): { code: ExitCode; config: LoadResult['config']; json?: Record<string, unknown> } {
  loadDotEnv(io.cwd, io.env);
  const result = loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd });
  let json: Record<string, unknown> | undefined;
  if (options.json) {
    json = {
      ok: result.config !== undefined,
      path: result.path,
      errors: result.errors.map(problemJson),
      warnings: result.warnings.map(problemJson),
      nodes: result.config?.nodes.map((node) => nodeJson(node, io.cwd)) ?? [],
      ...(result.config === undefined ? {} : chainsJson(result.config)),
    };
  } else if (result.config) {
    io.out(renderValidation(result, io.cwd));
  } else {
    io.err(renderValidation(result, io.cwd));
  }
  return { code: result.config ? 0 : 1, config: result.config, json };
}
