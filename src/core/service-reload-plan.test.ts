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

  it('lists chains and accounts added, removed and changed beside the nodes', () => {
    const node = (name: string, extra = '') =>
      `[[chains.nodes]]\nname = "${name}"\nurl = "http://127.0.0.1:1"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices/basic.toml"\n${extra}`;
    const server = '[server]\nhost = "127.0.0.1"\nport = 3000\n';
    const running = configOf(
      dir.load(
        `${server}[[accounts]]\nname = "p"\nmonthly_limit = 10\n[[accounts]]\nname = "gone"\nmonthly_limit = 1\n` +
          `[[chains]]\nname = "a"\n${node('a1', 'account = "p"')}\n[[chains]]\nname = "b"\n${node('b1', 'account = "gone"')}`,
      ),
    );
    const next = dir.load(
      `${server}[[accounts]]\nname = "p"\nmonthly_limit = 20\nrps_limit = 5\n` +
        `[[chains]]\nname = "a"\npaths = ["/a", "/x"]\n${node('a1', 'account = "p"')}\n[[chains]]\nname = "c"\n${node('c1')}`,
    );
    const plan = planReload(running, next);
    if (!plan.ok) throw new Error(JSON.stringify(plan.problems));
    expect(plan.beyondNodes).toEqual([
      'chain a: paths',
      'chain c added',
      'chain b removed',
      'account p: monthly_limit, rps_limit',
      'account gone removed',
    ]);
    expect(plan.diff).toEqual({ added: ['c1'], removed: ['b1'], changed: [] });
  });

  it('lists client keys added, removed and changed, naming a new secret without its hash', () => {
    const server = '[server]\nhost = "127.0.0.1"\nport = 3000\n';
    const nodes = `[[nodes]]\n${Object.entries(nodeFields('n'))
      .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
      .join('\n')}\n`;
    const key = (name: string, hash: string, extra = '') =>
      `[[keys]]\nname = "${name}"\nkey_sha256 = "${hash.repeat(64)}"\n${extra}\n`;
    const running = configOf(
      dir.load(`${server}${nodes}${key('web', 'a')}${key('api', 'b')}${key('old', 'c')}`),
    );
    const next = dir.load(
      `${server}${nodes}${key('web', 'd', 'rps_limit = 5\nmethods = ["get*"]')}${key('api', 'b')}${key('new', 'e')}`,
    );
    const plan = planReload(running, next);
    if (!plan.ok) throw new Error(JSON.stringify(plan.problems));
    expect(plan.beyondNodes).toEqual([
      'key web: secret, methods, rps_limit',
      'key new added',
      'key old removed',
    ]);
    expect(plan.beyondNodes.join()).not.toContain('d'.repeat(64));
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

  it('reloads [server]’s chain-state keys as the chain’s lag settings, not as a restart', () => {
    const running = configOf(dir.loadServer({ max_lag: 50, admin_port: 4001 }));
    const raised = dir.loadServer({ max_lag: 1000, admin_port: 4001 });
    const plan = planReload(running, raised);
    if (!plan.ok) throw new Error('expected a plan');
    expect(plan.needsRestart).toEqual([]);
    expect(plan.beyondNodes).toEqual(['chain default: lag settings']);
    expect(plan.next.server.chain?.maxLag).toEqual([1000, 1000]);
    expect(plan.next.server.adminPort).toBe(4001);
    // Unchanged: nothing to report, the running [server] stays as it is.
    const same = planReload(running, dir.loadServer({ max_lag: 50, admin_port: 4001 }));
    if (!same.ok) throw new Error('expected a plan');
    expect(same.needsRestart).toEqual([]);
    expect(same.beyondNodes).toEqual([]);
    expect(same.next.server).toBe(running.server);
    // Removed: back to the shipped defaults.
    const dropped = planReload(running, dir.loadServer({ admin_port: 4001 }));
    if (!dropped.ok) throw new Error('expected a plan');
    expect(dropped.next.server.chain).toBeUndefined();
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
