/**
 * `cascade status [--watch] [--json]`: the running server's node table from its admin
 * listener — state, latency, traffic against each limit, credits — refreshed every second
 * with --watch; state in colour on a terminal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchNodes, type NodeView, type NodesDocument } from '../core/index.js';
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
  if (node.monthly_limit === null) return `${formatCredits(node.credits_used)} (unmetered)`;
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

/** The node table and its footer, as people read it. */
export function renderStatus(doc: NodesDocument, colour: boolean): string {
  const now = Date.parse(doc.generated_at);
  const table = renderTable(
    [
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
    ],
    doc.nodes.map((node) => [
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
    ]),
  );
  const processes = doc.workers === 1 ? '1 serving process' : `${doc.workers} workers`;
  const lines = [table, `pid ${doc.pid} · ${processes} · as of ${doc.generated_at}`];
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
