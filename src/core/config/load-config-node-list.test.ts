/** loadConfig: the list of [[nodes]] as a whole. */
import { describe, expect, it } from 'vitest';
import { balancerToml, nodeFields } from '../../../test/support/config-files.js';
import { onlyAt, paths, useConfigDir } from '../../../test/support/config-loading.js';

const { temp, load } = useConfigDir();

describe('loadConfig: the node list', () => {
  it('rejects two nodes with the same name, naming it', () => {
    const result = load({ nodes: [nodeFields('x'), nodeFields('y'), nodeFields('x')] });
    const problem = onlyAt(result.errors, 'nodes[2].name');
    expect(problem.message).toContain("two nodes share the name 'x'");
    expect(problem.message).toContain('nodes[0] and nodes[2]');
  });

  it('treats names as case-sensitive when checking duplicates', () => {
    expect(load({ nodes: [nodeFields('x'), nodeFields('X')] }).errors).toEqual([]);
  });

  it('accepts 64 nodes', () => {
    const nodes = Array.from({ length: 64 }, (_, i) => nodeFields(`n${i}`));
    const result = load({ nodes });
    expect(result.errors).toEqual([]);
    expect(result.config?.nodes).toHaveLength(64);
  });

  it('rejects 65 nodes with the count', () => {
    const nodes = Array.from({ length: 65 }, (_, i) => nodeFields(`n${i}`));
    const problem = onlyAt(load({ nodes }).errors, 'nodes');
    expect(problem.message).toBe('at most 64 nodes are supported, config has 65');
  });

  it('rejects a config without [[nodes]]', () => {
    const problem = onlyAt(load({ nodes: [] }).errors, 'nodes');
    expect(problem.message).toBe('no [[nodes]] tables');
  });

  it('loads `nodes = []` with a warning that every request will fail', () => {
    const result = load(`nodes = []\n${balancerToml({ nodes: [] })}`);
    expect(result.errors).toEqual([]);
    expect(result.config?.nodes).toEqual([]);
    expect(onlyAt(result.warnings, 'nodes').message).toContain('the node list is empty');
  });

  it('rejects `nodes` that is not an array of tables', () => {
    expect(onlyAt(load(`nodes = 5\n${balancerToml({ nodes: [] })}`).errors, 'nodes').message).toBe(
      'must be an array of tables, got number 5',
    );
    const result = load(`nodes = [1, "a"]\n${balancerToml({ nodes: [] })}`);
    expect(onlyAt(result.errors, 'nodes[0]').message).toBe('must be a table, got number 1');
    expect(onlyAt(result.errors, 'nodes[1]').message).toBe('must be a table, got the string "a"');
  });

  it('rejects unknown top-level keys with a hint', () => {
    const result = load(`${balancerToml()}\n[node]\nname = "x"\n`);
    const problem = onlyAt(result.errors, 'node');
    expect(problem.message).toBe('unknown top-level key');
    expect(problem.hint).toContain("did you mean 'nodes'?");
  });

  it("suggests 'server' for a misspelt [server] table", () => {
    const result = load(`[sever]\nhost = "127.0.0.1"\nport = 1\n${balancerToml({ server: null })}`);
    expect(onlyAt(result.errors, 'sever').hint).toContain("did you mean 'server'?");
    expect(onlyAt(result.errors, 'server').message).toBe('the [server] table is missing');
  });

  it('reports every problem in one pass with exact paths', () => {
    const result = load({
      server: { port: 'abc', enable_metric: true },
      nodes: [
        nodeFields('a'),
        nodeFields('b', { url: 'localhost:1234' }),
        nodeFields('c', { rps_limit: 0, rps_limt: 5 }),
        nodeFields('a', { reset_day: 32, tier: -1 }),
      ],
    });
    expect(result.config).toBeUndefined();
    expect(paths(result.errors).sort()).toEqual(
      [
        'server.port',
        'server.enable_metric',
        'nodes[1].url',
        'nodes[2].rps_limit',
        'nodes[2].rps_limt',
        'nodes[3].tier',
        'nodes[3].reset_day',
        'nodes[3].name',
      ].sort(),
    );
    for (const problem of result.errors) expect(problem.file).toBe(temp.path('config.toml'));
  });
});
