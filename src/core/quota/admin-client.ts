/**
 * The client side of the admin listener, for `cascade quota`: live usage from the running
 * server, and resets that go through it (so its next flush cannot undo them).
 */
import { UsageError } from '../errors.js';
import type { AccountQuotaRow, QuotaRow } from './quota-report.js';
import type { ServerLock } from './server-lock.js';

const ADMIN_TIMEOUT_MS = 2000;

/** What GET /admin/quota and a reset answer: the nodes' rows, the accounts' when configured. */
export interface QuotaDocument {
  readonly nodes: QuotaRow[];
  /** Absent: the server has no provider accounts (or predates them). */
  readonly accounts?: AccountQuotaRow[];
}

async function call(lock: ServerLock, route: string, body?: unknown): Promise<QuotaDocument> {
  const response = await fetch(`http://127.0.0.1:${lock.adminPort}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
  });
  const parsed = (await response.json()) as Partial<QuotaDocument> & { error?: string };
  if (!response.ok || !parsed.nodes)
    throw new UsageError(`the running server refused: ${parsed.error ?? response.status}`);
  return parsed.accounts === undefined
    ? { nodes: parsed.nodes }
    : { nodes: parsed.nodes, accounts: parsed.accounts };
}

/** Live usage rows of the nodes and the accounts from the server holding the lock. */
export function fetchQuota(lock: ServerLock): Promise<QuotaDocument> {
  return call(lock, '/admin/quota');
}

/** Live usage rows from the server holding the lock. */
export async function fetchQuotaRows(lock: ServerLock): Promise<QuotaRow[]> {
  return (await fetchQuota(lock)).nodes;
}

/**
 * Resets `targets` (node names and account names), or every node and account, through the
 * running server; the rows after the reset.
 */
export function resetThroughServer(
  lock: ServerLock,
  targets: { readonly nodes: readonly string[]; readonly accounts?: readonly string[] } | 'all',
): Promise<QuotaDocument> {
  if (targets === 'all') return call(lock, '/admin/quota/reset', { all: true });
  const accounts = targets.accounts ?? [];
  return call(lock, '/admin/quota/reset', {
    ...(targets.nodes.length === 0 ? {} : { nodes: targets.nodes }),
    ...(accounts.length === 0 ? {} : { accounts }),
  });
}
