/**
 * The chains and provider accounts part of `cascade validate-config` (issue 28): which chain
 * each node serves and where, which account bills it, and each account's pool and limits. A
 * config with neither prints and answers exactly as before.
 */
import type { Config, NodeConfig } from '../core/index.js';
import { formatCredits, formatLimit, renderTable } from './output.js';

const orNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

/** The keys a node row gains: its chain (with `[[chains]]`) and account (when it names one). */
export function nodeLinksJson(node: NodeConfig): { chain?: string; account?: string } {
  return {
    ...(node.chain === undefined ? {} : { chain: node.chain }),
    ...(node.account === undefined ? {} : { account: node.account }),
  };
}

function nodesOf(config: Config, pick: (node: NodeConfig) => boolean): string[] {
  return config.nodes.filter(pick).map((node) => node.name);
}

/** `chains` and `accounts` of the --json document, when the config has them. */
export function chainsJson(config: Config): Record<string, unknown> {
  const accounts = config.accounts ?? [];
  return {
    ...(config.chains === undefined
      ? {}
      : {
          chains: config.chains.map((chain) => ({
            name: chain.name,
            paths: chain.paths,
            hosts: chain.hosts,
            expect_chain: chain.lag?.expectChain ?? null,
            nodes: nodesOf(config, (node) => node.chain === chain.name),
          })),
        }),
    ...(accounts.length === 0
      ? {}
      : {
          accounts: accounts.map((account) => ({
            name: account.name,
            monthly_limit: account.monthlyLimit ?? null,
            spillover_threshold: orNull(account.spilloverThreshold),
            reset_day: account.resetDay,
            rps_limit: orNull(account.rpsLimit),
            max_concurrent: orNull(account.maxConcurrent),
            nodes: nodesOf(config, (node) => node.account === account.name),
          })),
        }),
  };
}

/** The chains' and the accounts' tables for people (none for a config without them). */
export function renderChains(config: Config): string[] {
  const tables: string[] = [];
  if (config.chains !== undefined)
    tables.push(
      renderTable(
        ['chain', 'paths', 'hosts', 'expect chain', 'nodes'],
        config.chains.map((chain) => [
          chain.name,
          chain.paths.join(', '),
          chain.hosts.join(', ') || '—',
          chain.lag?.expectChain ?? '—',
          nodesOf(config, (node) => node.chain === chain.name).join(', '),
        ]),
      ),
    );
  const accounts = config.accounts ?? [];
  if (accounts.length > 0)
    tables.push(
      renderTable(
        ['account', 'monthly limit', 'spillover at', 'reset day', 'rps', 'max concurrent', 'nodes'],
        accounts.map((account) => [
          account.name,
          formatCredits(account.monthlyLimit),
          formatCredits(account.spilloverThreshold),
          String(account.resetDay),
          formatLimit(account.rpsLimit),
          formatLimit(account.maxConcurrent),
          nodesOf(config, (node) => node.account === account.name).join(', ') || '—',
        ]),
      ),
    );
  return tables;
}

/** `OK, 4 node(s)`, with the chains and accounts counted when the config has them. */
export function okSummary(config: Config): string {
  const parts: string[] = [];
  if (config.chains !== undefined) parts.push(`${config.chains.length} chain(s)`);
  parts.push(`${config.nodes.length} node(s)`);
  const accounts = config.accounts?.length ?? 0;
  if (accounts > 0) parts.push(`${accounts} account(s)`);
  return `OK, ${parts.join(', ')}`;
}
