import { describe, expect, it } from 'vitest';
import { nodeFields, priceListToml } from '../../test/support/config-files.js';
import { useConfigDir } from '../../test/support/config-loading.js';
import type { Config, LoadResult } from './config/types.js';
import { NO_CONFIG_FILE, changedServerFields, planReload } from './service-reload-plan.js';

const dir = useConfigDir();

function configOf(result: LoadResult): Config {
  expect(result.errors).toEqual([]);
  return result.config!;
}

describe('planReload', () => {
  it('refuses when there is no file behind the running config', () => {
    const running = configOf(dir.load({}));
    expect(planReload(running, undefined)).toEqual({ ok: false, problems: [NO_CONFIG_FILE] });
  });

  it('refuses a broken file with one formatted line per problem, and changes nothing', () => {
    const running = configOf(dir.load({}));
    const broken = dir.loadNode({ rps_limit: 0 });
    const plan = planReload(running, broken);
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.problems).toHaveLength(broken.errors.length);
    expect(plan.problems[0]).toContain('nodes[0].rps_limit');
  });

  it('lists added, removed and changed nodes', () => {
    const running = configOf(dir.load({ nodes: [nodeFields('a'), nodeFields('b')] }));
    const next = dir.load({ nodes: [nodeFields('a', { tier: 2 }), nodeFields('c')] });
    const plan = planReload(running, next);
    expect(plan.ok && plan.diff).toEqual({ added: ['c'], removed: ['b'], changed: ['a: tier'] });
    expect(plan.ok && plan.needsRestart).toEqual([]);
  });

  it('names changed [server] keys by their TOML names and keeps the running [server]', () => {
    const running = configOf(dir.loadServer({ admin_port: 4001, max_batch_size: 10 }));
    const next = dir.loadServer({ admin_port: 4002, max_batch_size: 20 });
    const plan = planReload(running, next);
    if (!plan.ok) throw new Error('expected a plan');
    expect(plan.needsRestart).toEqual(['server.max_batch_size', 'server.admin_port']);
    expect(plan.next.server).toBe(running.server);
    expect(plan.next.nodes).toBe(next.config!.nodes);
  });

  it('reports a changed [cluster] as needing a restart and keeps the running one', () => {
    const running = configOf(dir.load({}));
    const next = dir.load({ extra: '[cluster]\nworkers = 2\n' });
    const plan = planReload(running, next);
    if (!plan.ok) throw new Error('expected a plan');
    expect(plan.needsRestart).toEqual(['[cluster]']);
    expect(plan.next.cluster).toBe(running.cluster);
  });

  it('carries the new file’s warnings as formatted lines', () => {
    const running = configOf(dir.load({}));
    const next = dir.load(
      {},
      { prices: { 'prices/basic.toml': priceListToml({ routing: { getBalanse: 1 } }) } },
    );
    expect(next.warnings.length).toBeGreaterThan(0);
    const plan = planReload(running, next);
    expect(plan.ok && plan.warnings).toEqual([expect.stringContaining('routing.getBalanse')]);
  });
});

describe('changedServerFields', () => {
  it('compares lists by element, and sees a key only one side has', () => {
    const { server } = configOf(dir.load({}));
    const running = { ...server, corsOrigins: ['https://a.example'] };
    const same = { ...server, corsOrigins: ['https://a.example'] };
    const other = { ...server, corsOrigins: ['https://b.example'], wsPort: 3001 };
    expect(changedServerFields(running, same)).toEqual([]);
    expect(changedServerFields(running, other).sort()).toEqual(['corsOrigins', 'wsPort']);
  });
});
