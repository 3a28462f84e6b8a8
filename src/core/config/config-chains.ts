/**
 * How the chains and accounts of a loaded config relate to its nodes: every config is a list
 * of chains (the implicit one at `/` for top-level `[[nodes]]`), and the checks that tie
 * nodes to accounts.
 */
import { accountUsageName } from './accounts-section.js';
import type { KeysConfig } from './key-types.js';
import type { NamedNode } from './node-section.js';
import type { ProblemList } from './problem-list.js';
import {
  DEFAULT_CHAIN,
  type AccountConfig,
  type ChainConfig,
  type Config,
  type NodeConfig,
} from './types.js';

/** The chains a config serves: its `[[chains]]`, or the one chain of a `[[nodes]]` config. */
export function chainsOf(config: Config): readonly ChainConfig[] {
  return (
    config.chains ?? [
      {
        name: DEFAULT_CHAIN,
        paths: ['/'],
        hosts: [],
        lag: config.server.chain,
        routing: config.routing,
        cache: config.cache,
      },
    ]
  );
}

/** An account's pool as the usage ledger and quotas.json know it (`account:NAME`). */
export interface AccountEntry {
  readonly name: string;
  readonly resetDay: number;
  readonly spilloverThreshold: number;
  readonly rpsLimit: number;
  readonly maxConcurrent: number;
}

/** The config's accounts as usage entries beside the nodes' (periods, flushes, thresholds). */
export function accountEntries(config: Pick<Config, 'accounts'>): AccountEntry[] {
  return (config.accounts ?? []).map((account) => ({
    name: accountUsageName(account.name),
    resetDay: account.resetDay,
    spilloverThreshold: account.spilloverThreshold,
    rpsLimit: account.rpsLimit,
    maxConcurrent: account.maxConcurrent,
  }));
}

/** The chain a node serves. */
export function chainOf(node: NodeConfig): string {
  return node.chain ?? DEFAULT_CHAIN;
}

/**
 * Every node's `account` names an `[[accounts]]` entry; an account no node names is probably a
 * typo (a warning); no node may be named like an account's usage entry in quotas.json.
 */
export function checkAccountLinks(
  accounts: readonly AccountConfig[],
  /** Every account name written, valid or not (an invalid account is reported on its own). */
  written: ReadonlySet<string>,
  nodes: readonly NamedNode[],
  file: string,
  problems: ProblemList,
): void {
  const used = new Set<string>();
  for (const node of nodes) {
    if (node.name?.startsWith(accountUsageName('')) === true)
      problems.error(
        file,
        `${node.where}.name`,
        `node name '${node.name}' starts with 'account:', which quotas.json keeps for provider accounts`,
        'rename the node',
      );
    if (node.account === undefined) continue;
    used.add(node.account);
    if (!written.has(node.account))
      problems.error(
        file,
        `${node.where}.account`,
        `node '${node.name ?? node.where}' names account '${node.account}', which no [[accounts]] entry defines`,
        accounts.length === 0
          ? 'add an [[accounts]] table with that name, or remove the key'
          : `the accounts are: ${accounts.map((a) => a.name).join(', ')}`,
      );
  }
  accounts.forEach((account, index) => {
    if (!used.has(account.name))
      problems.warn(
        file,
        `accounts[${index}]`,
        `no node names account '${account.name}': its pool and limits apply to nothing`,
        `add account = "${account.name}" to the nodes billed to it, or remove the account`,
      );
  });
}

/** Every key's `chains` names chains the config serves. */
export function checkKeyChains(
  keys: KeysConfig | undefined,
  chains: readonly ChainConfig[] | undefined,
  file: string,
  problems: ProblemList,
): void {
  const served = chains?.map((chain) => chain.name) ?? [DEFAULT_CHAIN];
  for (const key of keys?.keys ?? []) {
    for (const chain of key.chains ?? []) {
      if (served.includes(chain)) continue;
      problems.error(
        file,
        'keys',
        `key '${key.name}' is scoped to chain '${chain}', which ${chains === undefined ? 'a [[nodes]] config does not serve (its one chain is "default")' : 'no [[chains]] entry serves'}`,
        `the chains are: ${served.join(', ')}`,
      );
    }
  }
}
