/**
 * cascade with its admin listener, for tests of the operator's admin API: started the way
 * `cascade serve` starts it, in front of hand-written upstreams, closed after each test.
 */
import { afterEach, expect } from 'vitest';
import type { Config, LoadResult, ServerConfig } from '../../src/core/config/types.js';
import type { Cascade } from '../../src/core/service.js';
import { rpc, ROUTING_ONLY_CACHE, serverConfig } from './proxy-harness.js';
import { startTestCascade } from './test-cascade.js';
import { makeTempDir, type TempDir } from './temp-dir.js';
import { closeUpstreams, startUpstream } from './upstreams.js';

/** A running cascade: its main and admin URLs and what it logged. */
export interface AdminCascade {
  readonly cascade: Cascade;
  readonly url: string;
  readonly admin: string;
  readonly logs: string[];
}

/** Starts cascade on `nodes` (admin port on; `reloadSource` answers a reload). */
export type StartAdminCascade = (
  nodes: Config['nodes'],
  server?: Partial<ServerConfig>,
  reloadSource?: () => LoadResult,
) => Promise<AdminCascade>;

/** Registers the clean-up (cascade, upstreams, temp dir) after each test; returns `start`. */
export function useAdminCascade(): StartAdminCascade {
  let cascade: Cascade | undefined;
  let temp: TempDir | undefined;
  afterEach(async () => {
    await cascade?.close();
    cascade = undefined;
    await closeUpstreams();
    temp?.cleanup();
    temp = undefined;
  });
  return async (nodes, server = {}, reloadSource) => {
    temp = makeTempDir('cascade-admin-');
    const config: Config = {
      path: '/test/config.toml',
      // Held requests must not time out while the test looks at them.
      server: serverConfig({
        adminPort: 0,
        requestTimeoutMs: 60_000,
        attemptTimeoutMs: 30_000,
        ...server,
      }),
      nodes,
      // Identical requests held at once must each reach the node: no coalescing.
      cache: ROUTING_ONLY_CACHE,
    };
    const started = await startTestCascade(config, {
      quotasPath: `${temp.dir}/quotas.json`,
      reloadSource,
    });
    cascade = started.cascade;
    return {
      cascade,
      url: `http://127.0.0.1:${cascade.server.port}`,
      admin: `http://127.0.0.1:${cascade.adminPort}`,
      logs: started.logs,
    };
  };
}

/** An upstream that answers at once and counts what it got. */
export async function startCounting(): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const url = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'b' }));
    });
  });
  return { url, received: () => received };
}

/** POSTs one getSlot request to `url`. */
export function send(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpc('getSlot')),
  });
}

/** GET /admin/nodes on `admin` (expecting 200): the node table, the events, the workers. */
export async function nodesOf(admin: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${admin}/admin/nodes`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    workers: number;
    nodes: Array<Record<string, unknown>>;
    events: Array<Record<string, unknown>>;
  };
}
