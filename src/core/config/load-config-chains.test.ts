import { describe, expect, it } from 'vitest';
import { onlyAt, paths, useConfigDir } from '../../../test/support/config-loading.js';
import { chainsOf } from './config-chains.js';

const dir = useConfigDir();

const SERVER = '[server]\nhost = "127.0.0.1"\nport = 3000\n';

function node(name: string, extra = ''): string {
  return `url = "http://127.0.0.1:8891"\nname = "${name}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices/basic.toml"\n${extra}`;
}

const TWO_CHAINS = `${SERVER}
[[accounts]]
name = "alchemy"
monthly_limit = 300000000
rps_limit = 300
max_concurrent = 20

[[chains]]
name = "solana"
paths = ["/solana", "/sol"]
max_lag = 30
expect_chain = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"

[[chains.nodes]]
${node('helius')}

[[chains]]
name = "eth"
hosts = ["ETH.rpc.example.com"]

[chains.cache]
enabled = true

[chains.routing]
default_strategy = "latency"

[[chains.nodes]]
${node('alchemy-eth', 'account = "alchemy"')}

[[chains.nodes]]
${node('mirror-eth')}
`;

describe('loadConfig: [[chains]] and [[accounts]]', () => {
  it('reads each chain with its paths, hosts, nodes and settings', () => {
    const result = dir.load(TWO_CHAINS);
    expect(result.errors).toEqual([]);
    const config = result.config!;
    expect(config.nodes.map((n) => [n.name, n.chain, n.account])).toEqual([
      ['helius', 'solana', undefined],
      ['alchemy-eth', 'eth', 'alchemy'],
      ['mirror-eth', 'eth', undefined],
    ]);
    const [solana, eth] = chainsOf(config);
    expect(solana).toMatchObject({ name: 'solana', paths: ['/solana', '/sol'], hosts: [] });
    expect(solana!.lag).toMatchObject({
      maxLag: [30, 30],
      expectChain: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
    });
    // A chain without paths is served at /NAME; host names are kept lower case.
    expect(eth).toMatchObject({ name: 'eth', paths: ['/eth'], hosts: ['eth.rpc.example.com'] });
    expect(eth!.cache?.enabled).toBe(true);
    expect(eth!.routing?.defaultStrategy).toBe('latency');
    expect(solana!.cache).toBeUndefined();
    expect(solana!.routing?.defaultStrategy).toBe('cost');
    expect(config.accounts).toEqual([
      {
        name: 'alchemy',
        monthlyLimit: 300000000,
        resetDay: 1,
        rpsLimit: 300,
        maxConcurrent: 20,
        spilloverPercent: 95,
        spilloverThreshold: 285000000,
      },
    ]);
  });

  it('keeps a [[nodes]] config one chain at / with its top-level settings', () => {
    const result = dir.load({});
    expect(result.errors).toEqual([]);
    expect(result.config!.chains).toBeUndefined();
    expect(chainsOf(result.config!)).toEqual([
      expect.objectContaining({ name: 'default', paths: ['/'], hosts: [] }),
    ]);
  });

  it('gives top-level [cache] and [routing] to chains that set none', () => {
    const text = `${SERVER}[cache]\nenabled = true\n[routing]\ndefault_strategy = "latency"\n[[chains]]\nname = "a"\n[[chains.nodes]]\n${node('n1')}`;
    const result = dir.load(text);
    expect(result.errors).toEqual([]);
    const [a] = chainsOf(result.config!);
    expect(a!.cache?.enabled).toBe(true);
    expect(a!.routing?.defaultStrategy).toBe('latency');
  });

  it('reports one clear line for each mistake', () => {
    const text = `${SERVER}
[[accounts]]
name = "unused"
monthly_limit = 10

[[chains]]
name = "a"
paths = ["/x"]
[[chains.nodes]]
${node('n1', 'account = "alchemy"')}

[[chains]]
name = "b"
paths = ["/x", "/health", "no-slash"]
[[chains.nodes]]
${node('n1')}
`;
    const result = dir.load(text);
    expect(result.config).toBeUndefined();
    expect(onlyAt(result.errors, 'chains[0].nodes[0].account').message).toBe(
      "node 'n1' names account 'alchemy', which no [[accounts]] entry defines",
    );
    expect(onlyAt(result.errors, 'chains[1].paths').message).toBe(
      "chains 'a' and 'b' both claim the path /x",
    );
    expect(onlyAt(result.errors, 'chains[1].paths[1]').message).toContain('cascade itself answers');
    expect(onlyAt(result.errors, 'chains[1].paths[2]').message).toContain('is not a URL path');
    expect(onlyAt(result.errors, 'chains[1].nodes[0].name').message).toBe(
      "two nodes share the name 'n1' (chains[0].nodes[0] and chains[1].nodes[0])",
    );
    expect(onlyAt(result.warnings, 'accounts[0]').message).toBe(
      "no node names account 'unused': its pool and limits apply to nothing",
    );
  });

  it("refuses a chain path under another chain's path, in either order, and a path listed twice", () => {
    const chain = (name: string, paths: string, n: string) =>
      `[[chains]]\nname = "${name}"\npaths = ${paths}\n[[chains.nodes]]\n${node(n)}\n`;
    const text = `${SERVER}
${chain('base', '["/eth/send-request", "/eth/base", "/b", "/b"]', 'n1')}
${chain('eth', '["/eth", "/eth/v2"]', 'n2')}
${chain('root', '["/"]', 'n3')}
`;
    const result = dir.load(text);
    expect(result.config).toBeUndefined();
    const messages = result.errors.map((problem) => `${problem.path}: ${problem.message}`);
    expect(messages).toEqual([
      "chains[0].paths: chain 'base' lists the path /b twice",
      "chains[0].paths: the path /eth/send-request of chain 'base' lies under /eth, the path of chain 'eth' (/eth/send-request and /eth/<key> are that chain's)",
      "chains[0].paths: the path /eth/base of chain 'base' lies under /eth, the path of chain 'eth' (/eth/send-request and /eth/<key> are that chain's)",
    ]);
    // A chain's own sub-paths, and paths beside a chain at /, are fine.
    expect(messages.join('\n')).not.toContain("chain 'eth' lies under");
  });

  it('names [[chains.nodes]] when a chain has no nodes', () => {
    const result = dir.load(`${SERVER}\n[[chains]]\nname = "eth"\n`);
    const problem = onlyAt(result.errors, 'chains[0].nodes');
    expect(problem.message).toBe('no [[chains.nodes]] tables');
    expect(problem.hint).toBe('add at least one [[chains.nodes]] entry for an upstream');
  });

  it('refuses [[nodes]] beside [[chains]], and names the paths of chain sections', () => {
    const text = `${SERVER}[[nodes]]\n${node('top')}\n[[chains]]\nname = "a"\nmax_lag = -1\n[chains.cache]\nmax_bytes = "x"\n[[chains.nodes]]\n${node('n1', 'tier = 300')}`;
    const result = dir.load(
      text.replace(
        'tier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices/basic.toml"\ntier = 300',
        'tier = 300\nmonthly_limit = 0\nprovider_pricing_path = "prices/basic.toml"',
      ),
    );
    expect(result.config).toBeUndefined();
    expect(paths(result.errors)).toEqual(
      expect.arrayContaining([
        'nodes',
        'chains[0].max_lag',
        'chains[0].cache.max_bytes',
        'chains[0].nodes[0].tier',
      ]),
    );
    expect(onlyAt(result.errors, 'nodes').message).toBe(
      'the config has both top-level [[nodes]] and [[chains]]',
    );
  });

  it('lets a node of an account leave out monthly_limit, and checks account fields', () => {
    const text = `${SERVER}[[accounts]]\nname = "qn"\nmonthly_limit = 0\nrps_limit = 0\nspillover_percent = 101\nbogus = 1\n[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:1"\ntier = 0\naccount = "qn"\nprovider_pricing_path = "prices/basic.toml"\n`;
    const result = dir.load(text);
    expect(paths(result.errors).sort()).toEqual([
      'accounts[0].bogus',
      'accounts[0].rps_limit',
      'accounts[0].spillover_percent',
    ]);
    const fixed = dir.load(text.replace('rps_limit = 0\nspillover_percent = 101\nbogus = 1\n', ''));
    expect(fixed.errors).toEqual([]);
    expect(fixed.config!.nodes[0]).toMatchObject({ account: 'qn', monthlyLimit: undefined });
    expect(fixed.config!.accounts![0]).toMatchObject({
      monthlyLimit: undefined,
      spilloverThreshold: Infinity,
    });
  });

  it('refuses a key scoped to a chain the config does not serve', () => {
    const key =
      '[[keys]]\nname = "web"\nkey_sha256 = "' +
      'a'.repeat(64) +
      '"\nchains = ["solana", "base"]\n';
    const result = dir.load(TWO_CHAINS + key);
    expect(onlyAt(result.errors, 'keys')).toEqual(
      expect.objectContaining({
        message: "key 'web' is scoped to chain 'base', which no [[chains]] entry serves",
        hint: 'the chains are: solana, eth',
      }),
    );
    const single = dir.load(`${SERVER}[[nodes]]\n${node('n')}\n${key.replace(', "base"', '')}`);
    expect(onlyAt(single.errors, 'keys').message).toContain('a [[nodes]] config does not serve');
    const fixed = dir.load(TWO_CHAINS + key.replace(', "base"', ''));
    expect(fixed.errors).toEqual([]);
    expect(fixed.config!.keys!.keys[0]!.chains).toEqual(['solana']);
  });
});
