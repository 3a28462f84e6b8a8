/**
 * The live status page: one self-contained HTML file shipped in the package (web/status.html,
 * no framework, no CDN, no build step), read once. Its script polls /admin/nodes every second;
 * without JavaScript the table rendered here, refreshed by the page every 5 s, is what shows.
 */
import { readFileSync } from 'node:fs';
import type { AccountView, ChainView } from './chain-views.js';
import type { NodeView } from './node-view.js';
import type { NodesDocument } from './operator.js';

/** From src/core/admin and from dist/core/admin alike, three levels up is the package root. */
const PAGE = new URL('../../../web/status.html', import.meta.url);

let template: string | undefined;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const num = (value: number | null, none = '—'): string =>
  value === null ? none : value.toLocaleString('en-US');

function row(node: NodeView): string {
  // A node billed to an account spends its pool (the accounts table), not an unmetered plan.
  const pooled = node.account === undefined ? undefined : `account ${node.account}`;
  const cells = [
    node.name,
    String(node.tier),
    String(node.rank),
    node.state,
    node.latency_ms === null ? '—' : node.latency_ms.toFixed(1),
    `${num(node.rps)} (${num(node.rps_limit, '∞')})`,
    '',
    `${num(node.in_flight)} (${num(node.max_concurrent, '∞')})`,
    node.spillover_threshold === null
      ? (pooled ?? 'unmetered')
      : `threshold ${num(node.spillover_threshold)}`,
    `${num(node.credits_used)} / ${num(node.monthly_limit, pooled ?? 'unmetered')}`,
    node.next_reset,
    `${num(node.requests_last_minute)} / ${num(node.failures_last_minute)}`,
    node.head === null || node.head === undefined
      ? '—'
      : `${num(node.head)} (${node.lag === null || node.lag === undefined ? '?' : num(node.lag)})`,
  ];
  const tds = cells.map(
    (text, i) => `<td${i === 3 ? ` class="state state-${node.state}"` : ''}>${escape(text)}</td>`,
  );
  if (node.account !== undefined)
    tds[0] = `<td>${escape(node.name)}<div class="why">account ${escape(node.account)}</div></td>`;
  return `<tr data-node="${escape(node.name)}">${tds.join('')}</tr>`;
}

/** The row naming a chain above its nodes' rows. */
function chainHead(chain: ChainView): string {
  const hosts = chain.hosts.length === 0 ? '' : ` · hosts ${chain.hosts.join(', ')}`;
  const state = chain.status === 'ok' ? 'up' : 'penalized';
  const status = `${chain.status}, ${chain.active_nodes} of ${chain.total_nodes} nodes active`;
  return `<tr class="chain-head" data-chain="${escape(chain.name)}"><th colspan="13">${escape(`chain ${chain.name} — ${chain.paths.join(', ')}${hosts}`)}<span class="chain-status state-${state}">${escape(status)}</span></th></tr>`;
}

/** The node rows, grouped under their chains' rows when the document has chains. */
function rows(doc: NodesDocument): string {
  if (doc.chains === undefined) return doc.nodes.map(row).join('\n');
  return doc.chains
    .flatMap((chain) => [
      chainHead(chain),
      ...doc.nodes.filter((node) => node.chain === chain.name).map(row),
    ])
    .join('\n');
}

function accountRow(account: AccountView): string {
  const cells = [
    account.name,
    account.nodes.join(', ') || '—',
    `${num(account.rps)} (${num(account.rps_limit, '∞')})`,
    `${num(account.in_flight)} (${num(account.max_concurrent, '∞')})`,
    account.spillover_threshold === null
      ? 'unmetered'
      : `threshold ${num(account.spillover_threshold)}`,
    `${num(account.credits_used)} / ${num(account.monthly_limit, 'unmetered')}`,
    account.next_reset,
    `${num(account.requests_last_minute)} / ${num(account.failures_last_minute)}`,
  ];
  const tds = cells.map((text) => `<td>${escape(text)}</td>`);
  return `<tr data-account="${escape(account.name)}">${tds.join('')}</tr>`;
}

/** The page, with the table filled from `doc` (undefined: the script fills it, e.g. behind a token). */
export function renderStatusPage(doc: NodesDocument | undefined): string {
  template ??= readFileSync(PAGE, 'utf8');
  if (doc === undefined) return template.replace('<!--GENERATED-->', 'loading…');
  const events = [...doc.events]
    .reverse()
    .map(
      (e) => `<li>${escape(`${e.at} ${e.node} ${e.kind}${e.detail ? ` — ${e.detail}` : ''}`)}</li>`,
    );
  const accounts = doc.accounts ?? [];
  return template
    .replace('<!--ROWS-->', rows(doc))
    .replace('<!--ACCOUNTS-->', accounts.map(accountRow).join('\n'))
    .replace(
      '<section id="accounts-section" hidden>',
      accounts.length === 0
        ? '<section id="accounts-section" hidden>'
        : '<section id="accounts-section">',
    )
    .replace('<!--GENERATED-->', escape(`as of ${doc.generated_at} · pid ${doc.pid}`))
    .replace('<!--TIERS-->', '')
    .replace('<!--EVENTS-->', events.join('\n'));
}
