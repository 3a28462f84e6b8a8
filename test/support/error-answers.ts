/** Upstream error answers for tests of who is at fault, and the node states they leave. */
import type { MockBehaviour } from '../../src/mock/index.js';
import type { Harness } from './proxy-harness.js';

/** A JSON-RPC error answer as a node writes it (the id echoed as 1). */
export function errorBody(error: { code: number; message: string; data?: unknown }): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, error });
}

/** A node whose every answer is `body` with HTTP `status`. */
export function answering(body: string, status = 200): Partial<MockBehaviour> {
  return { fault: { kind: 'http', status, body, contentType: 'application/json' } };
}

/** Node name → 'up' | 'down' | 'unknown'. */
export async function states(h: Harness): Promise<Record<string, string>> {
  return Object.fromEntries((await h.health()).nodes.map((n) => [n.name, n.status]));
}
