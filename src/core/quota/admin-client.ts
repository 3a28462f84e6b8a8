/**
 * The client side of the admin listener, for `cascade quota`: live usage from the running
 * server, and resets that go through it (so its next flush cannot undo them).
 */
import { UsageError } from '../errors.js';
import type { QuotaRow } from './quota-report.js';
import type { ServerLock } from './server-lock.js';

const ADMIN_TIMEOUT_MS = 2000;

async function call(lock: ServerLock, route: string, body?: unknown): Promise<QuotaRow[]> {
  const response = await fetch(`http://127.0.0.1:${lock.adminPort}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
  });
  const parsed = (await response.json()) as { nodes?: QuotaRow[]; error?: string };
  if (!response.ok || !parsed.nodes)
    throw new UsageError(`the running server refused: ${parsed.error ?? response.status}`);
  return parsed.nodes;
}

/** Live usage rows from the server holding the lock. */
export function fetchQuotaRows(lock: ServerLock): Promise<QuotaRow[]> {
  return call(lock, '/admin/quota');
}

/** Resets `nodes` (or every node) through the running server; the rows after the reset. */
export function resetThroughServer(
  lock: ServerLock,
  nodes: readonly string[] | 'all',
): Promise<QuotaRow[]> {
  return call(lock, '/admin/quota/reset', nodes === 'all' ? { all: true } : { nodes });
}
