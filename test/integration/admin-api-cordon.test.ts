/**
 * Operator actions through the admin API on a running cascade (startCascade, as `cascade serve`
 * runs it): cordon under load, uncordon, and reload.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/core/config/types.js';
import {
  nodesOf,
  send,
  startCounting,
  useAdminCascade,
  type AdminCascade,
} from '../support/admin-harness.js';
import { nodeConfig } from '../support/node-config.js';
import { startHeldUpstream } from '../support/upstreams.js';

const start = useAdminCascade();

describe('POST /admin/nodes/{name}/cordon', () => {
  it('sends the node nothing new once the call returns, lets in-flight requests finish, and uncordon brings traffic back', async () => {
    const a = await startHeldUpstream();
    const b = await startCounting();
    const s = await start([
      nodeConfig({ name: 'a', url: a.url, tier: 0 }),
      nodeConfig({ name: 'b', url: b.url, tier: 1 }),
    ]);
    const inFlight = [send(s.url), send(s.url), send(s.url)];
    await vi.waitFor(() => expect(a.held).toBe(3));

    const cordon = await fetch(`${s.admin}/admin/nodes/a/cordon`, { method: 'POST' });
    expect(cordon.status).toBe(200);
    expect(await cordon.json()).toEqual({ node: 'a', cordoned: true });
    const during = await Promise.all(Array.from({ length: 5 }, () => send(s.url)));
    expect(during.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(a.received).toBe(3);
    expect(b.received()).toBe(5);

    a.release();
    const finished = await Promise.all(inFlight);
    expect(finished.map((r) => r.status)).toEqual([200, 200, 200]);
    const answers = (await Promise.all(finished.map((r) => r.json()))) as Array<{ result: number }>;
    expect(answers.map((answer) => answer.result)).toEqual([1, 2, 3]);

    const health = (await (await fetch(`${s.url}/health`)).json()) as {
      status: string;
      nodes: Array<Record<string, unknown>>;
    };
    expect(health.status).toBe('degraded');
    expect(health.nodes[0]).toMatchObject({ name: 'a', cordoned: true });
    expect((await nodesOf(s.admin)).nodes[0]).toMatchObject({ state: 'cordoned', cordoned: true });
    await vi.waitFor(async () => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(text).toContain('rpc_node_cordoned{node="a"} 1');
    });
    expect(s.logs.join('')).toContain('node cordoned: no new requests until uncordon or restart');

    const uncordon = await fetch(`${s.admin}/admin/nodes/a/uncordon`, { method: 'POST' });
    expect(await uncordon.json()).toEqual({ node: 'a', cordoned: false });
    a.open();
    expect((await send(s.url)).status).toBe(200);
    expect(a.received).toBe(4);
    expect(b.received()).toBe(5);
    const events = (await nodesOf(s.admin)).events.map((e) => e.kind);
    expect(events).toEqual(['cordoned', 'uncordoned']);
  });

  it('answers 404 naming the known nodes for an unknown one, 405 for GET', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })]);
    const unknown = await fetch(`${s.admin}/admin/nodes/zz/cordon`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'unknown node "zz"; known nodes: a' });
    expect((await fetch(`${s.admin}/admin/nodes/a/cordon`)).status).toBe(405);
  });

  it('keeps the cordon through a reload that keeps the node', async () => {
    const b = await startCounting();
    const nodes = [
      nodeConfig({ name: 'a', url: b.url }),
      nodeConfig({ name: 'b', url: b.url, tier: 1 }),
    ];
    let next: Config['nodes'] = nodes;
    // Annotated: the reload source reads `s`, so its type cannot come from this initializer.
    const s: AdminCascade = await start(nodes, {}, () => ({
      config: { path: '/test/config.toml', server: s.cascade.server.config.server, nodes: next },
      path: '/test/config.toml',
      errors: [],
      warnings: [],
    }));
    await fetch(`${s.admin}/admin/nodes/a/cordon`, { method: 'POST' });
    next = [{ ...nodes[0]!, rpsLimit: 10 }, nodes[1]!];
    const reload = await fetch(`${s.admin}/admin/reload`, { method: 'POST' });
    expect(reload.status).toBe(200);
    expect(await reload.json()).toEqual({
      ok: true,
      added: [],
      removed: [],
      changed: ['a: rps_limit'],
      needs_restart: [],
    });
    expect((await nodesOf(s.admin)).nodes[0]).toMatchObject({ name: 'a', state: 'cordoned' });
  });
});

describe('POST /admin/reload', () => {
  it('answers the errors as JSON when the reload is refused', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })]);
    const reload = await fetch(`${s.admin}/admin/reload`, { method: 'POST' });
    expect(reload.status).toBe(422);
    expect(await reload.json()).toEqual({
      ok: false,
      problems: ['there is no config file to reload (the demo runs built-in mock nodes)'],
    });
  });
});
