/**
 * `cascade status [--watch] [--json]`: the running server's node table from its admin
 * listener — state, latency, traffic against each limit, credits — refreshed every second
 * with --watch; state in colour on a terminal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  fetchNodes,
  type AccountView,
  type ChainView,
  type NodeView,
  type NodesDocument,
} from '../core/index.js';
import { resolveAdminTarget, type AdminTargetOptions } from './admin-target.js';
import type { CommandIo, ExitCode } from './io.js';
import { formatCredits, renderJson, renderTable } from './output.js';

/** Flags of `cascade status`. */
export interface StatusOptions extends AdminTargetOptions {
  readonly json?: boolean | undefined;
  readonly watch?: boolean | undefined;
  /** With --watch: stop after this many tables (tests; default: until Ctrl-C). */
  readonly iterations?: number | undefined;
}

const COLOURS: Record<NodeView['state'], string> = {
  up: '\x1b[32m',
  penalized: '\x1b[33m',
  cordoned: '\x1b[35m',
  unknown: '\x1b[90m',
};

const num = (value: number | null, none: string): string =>
  value === null ? none : value.toLocaleString('en-US');

function stateText(node: NodeView, now: number, colour: boolean): string {
  let text: string = node.state;
  if (node.penalized_until !== null) {
    const left = Math.max(0, Math.round((Date.parse(node.penalized_until) - now) / 1000));
    const why = node.penalty_reason ? `${node.penalty_reason}, ` : '';
    text = `${node.state} (${why}${left} s left)`;
  }
  return colour ? `${COLOURS[node.state]}${text}\x1b[0m` : text;
}

function credits(node: NodeView): string {
  if (node.monthly_limit === null) {
    const pool = node.account === undefined ? 'unmetered' : `account ${node.account}`;
    return `${formatCredits(node.credits_used)} (${pool})`;
  }
  const threshold = formatCredits(node.spillover_threshold ?? undefined);
  return `${formatCredits(node.credits_used)} / ${threshold} / ${formatCredits(node.monthly_limit)}`;
}

/** `head (lag)`: — when no head is known, `?` for a lag nobody can judge yet. */
function headText(node: NodeView): string {
  if (node.head === null || node.head === undefined) return '—';
  const lag = node.lag === null || node.lag === undefined ? '?' : num(node.lag, '?');
  return `${num(node.head, '—')} (${lag})`;
}

/** One node's eth_getLogs limits: configured, and what its errors taught; undefined: none. */
function logsLimitsOf(node: NodeView): string | undefined {
  const parts: string[] = [];
  const configured = node.logs_block_range ?? null;
  const learned = node.logs_block_range_learned ?? null;
  if (learned !== null) {
    const over = configured === null ? '' : `, configured ${num(configured, '')}`;
    parts.push(`${num(learned, '')} blocks (learned${over})`);
  } else if (configured !== null) {
    parts.push(`${num(configured, '')} blocks`);
  }
  const results = node.logs_results_learned ?? null;
  if (results !== null) parts.push(`${num(results, '')} logs per answer (learned)`);
  return parts.length === 0 ? undefined : `${node.name} ${parts.join(', ')}`;
}

/** One node table (every node, or one chain's); an account column when any node has one. */
function nodeTable(rows: readonly NodeView[], now: number, colour: boolean): string {
  const accounts = rows.some((node) => node.account !== undefined);
  const head = [
    'node',
    'tier',
    'rank',
    'state',
    'latency ms',
    'req/s (limit)',
    'in flight (max)',
    'credits used / spillover / limit',
    'next reset',
    'last min req/fail',
    'head (lag)',
  ];
  if (accounts) head.splice(2, 0, 'account');
  return renderTable(
    head,
    rows.map((node) => {
      const cells = [
        node.name,
        String(node.tier),
        String(node.rank),
        stateText(node, now, colour),
        node.latency_ms === null ? '—' : node.latency_ms.toFixed(1),
        `${num(node.rps, '0')} (${num(node.rps_limit, '∞')})`,
        `${num(node.in_flight, '0')} (${num(node.max_concurrent, '∞')})`,
        credits(node),
        node.next_reset,
        `${num(node.requests_last_minute, '0')} / ${num(node.failures_last_minute, '0')}`,
        headText(node),
      ];
      if (accounts) cells.splice(2, 0, node.account ?? '—');
      return cells;
    }),
  );
}

/** `chain base — /base, hosts base.example.com · ok, 2 of 2 nodes active` */
function chainHeading(chain: ChainView): string {
  const hosts = chain.hosts.length === 0 ? '' : `, hosts ${chain.hosts.join(', ')}`;
  return `chain ${chain.name} — ${chain.paths.join(', ')}${hosts} · ${chain.status}, ${chain.active_nodes} of ${chain.total_nodes} nodes active`;
}

/** `used / spillover / limit (percent of limit)`, or the usage of an unmetered account. */
function poolText(account: AccountView): string {
  if (account.monthly_limit === null) return `${formatCredits(account.credits_used)} (unmetered)`;
  const percent = ((account.credits_used / account.monthly_limit) * 100).toFixed(1);
  const threshold = formatCredits(account.spillover_threshold ?? undefined);
  return `${formatCredits(account.credits_used)} / ${threshold} / ${formatCredits(account.monthly_limit)} (${percent}%)`;
}

/** The provider accounts: one pool and one set of limits each, across their nodes. */
export function renderAccounts(accounts: readonly AccountView[]): string {
  return renderTable(
    [
      'account',
      'nodes',
      'req/s (limit)',
      'in flight (max)',
      'credits used / spillover / limit',
      'next reset',
      'last min req/fail',
    ],
    accounts.map((account) => [
      account.name,
      account.nodes.join(', ') || '—',
      `${num(account.rps, '0')} (${num(account.rps_limit, '∞')})`,
      `${num(account.in_flight, '0')} (${num(account.max_concurrent, '∞')})`,
      poolText(account),
      account.next_reset,
      `${num(account.requests_last_minute, '0')} / ${num(account.failures_last_minute, '0')}`,
    ]),
  );
}

/**
 * The node table and its footer, as people read it: with `[[chains]]` one table per chain
 * under its heading, with `[[accounts]]` the accounts' table after them.
 */
export function renderStatus(doc: NodesDocument, colour: boolean): string {
  const now = Date.parse(doc.generated_at);
  const lines: string[] = [];
  if (doc.chains === undefined) lines.push(nodeTable(doc.nodes, now, colour));
  else
    for (const chain of doc.chains) {
      lines.push(chainHeading(chain));
      lines.push(
        nodeTable(
          doc.nodes.filter((node) => node.chain === chain.name),
          now,
          colour,
        ),
      );
    }
  if (doc.accounts !== undefined) lines.push('provider accounts', renderAccounts(doc.accounts));
  const processes = doc.workers === 1 ? '1 serving process' : `${doc.workers} workers`;
  lines.push(`pid ${doc.pid} · ${processes} · as of ${doc.generated_at}`);
  const logs = doc.nodes.flatMap((node) => logsLimitsOf(node) ?? []);
  if (logs.length > 0) lines.push(`eth_getLogs limits: ${logs.join(' · ')}`);
  for (const event of doc.events.slice(-5)) {
    lines.push(
      `  ${event.at}  ${event.node} ${event.kind}${event.detail ? ` — ${event.detail}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** `cascade status`. */
export async function runStatus(options: StatusOptions, io: CommandIo): Promise<ExitCode> {
  const target = resolveAdminTarget(options, io);
  const show = (doc: NodesDocument) =>
    io.out(options.json ? renderJson(doc) : renderStatus(doc, process.stdout.isTTY === true));
  if (!options.watch) {
    show(await fetchNodes(target));
    return 0;
  }
  const clear = process.stdout.isTTY === true && !options.json;
  let shown = 0;
  for (;;) {
    let doc: NodesDocument;
    try {
      doc = await fetchNodes(target);
    } catch (err) {
      // Before the first table, a missing server is an error; later, a restart is waited out.
      if (shown === 0) throw err;
      io.err(`${(err as Error).message}; retrying`);
      await sleep(1000);
      continue;
    }
    if (clear) io.out('\x1b[2J\x1b[H');
    show(doc);
    if (++shown === options.iterations) return 0;
    await sleep(1000);
  }
}
