/**
 * The config the account e2e tests serve with the built CLI: two chains, `sol` (1 credit a
 * call) and `evm` (2 credits a call), each with a premium node billed to the provider account
 * `shared` and an unmetered backup a tier below. Both premium nodes live on one recording
 * upstream (paths /sol and /evm), both backups on another, so one report gives the account's
 * arrivals, its concurrency and each node's count.
 */
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { TempDir } from './temp-dir.js';

/** Credits one call costs on each chain. */
export const PRICE = { sol: 1, evm: 2 } as const;
export type Chain = keyof typeof PRICE;
export const CHAINS: readonly Chain[] = ['sol', 'evm'];
/** The method each chain is called with. */
const METHOD: Record<Chain, string> = { sol: 'getSlot', evm: 'eth_blockNumber' };

/** What one config file says besides the chains. */
export interface AccountChainsOptions {
  /** Lines of `[server]` (host and routing headers are set here). */
  readonly server: string;
  /** The `[[accounts]]` entry's lines after its name. */
  readonly account: string;
  /** A whole `[cluster]` table, or nothing. */
  readonly cluster?: string;
  /** Base URL of the upstream the premium nodes share. */
  readonly premium: string;
  /** Base URL of the upstream the backups share. */
  readonly backup: string;
}

/** Writes the price lists and `file` (relative to `temp`). */
export function writeAccountChains(temp: TempDir, file: string, o: AccountChainsOptions): void {
  for (const chain of CHAINS)
    writeFileSync(
      temp.path(`${chain}-prices.toml`),
      `[routing]\n${METHOD[chain]} = ${PRICE[chain]}\n[limits]\nunknown_method_cost = ${PRICE[chain]}\nspillover_percent = 100\n`,
    );
  const chains = CHAINS.map(
    (chain) =>
      `[[chains]]\nname = "${chain}"\n\n` +
      `[[chains.nodes]]\nname = "${chain}-prem"\nurl = "${o.premium}/${chain}"\ntier = 0\n` +
      `account = "shared"\nprovider_pricing_path = "${chain}-prices.toml"\n\n` +
      `[[chains.nodes]]\nname = "${chain}-backup"\nurl = "${o.backup}/${chain}"\ntier = 1\n` +
      `monthly_limit = 0\nprovider_pricing_path = "${chain}-prices.toml"\n`,
  );
  writeFileSync(
    temp.path(file),
    // Budgets no busy machine exhausts: a late answer must not make a node fail a call.
    `[server]\nhost = "127.0.0.1"\nrouting_headers = true\nrequest_timeout_ms = 30000\n` +
      `attempt_timeout_ms = 15000\n${o.server}\n\n` +
      `${o.cluster ?? ''}\n\n` +
      // Every request must reach a node: the account is what is measured, not the cache.
      `[cache]\nenabled = false\ncoalesce = false\n\n` +
      `[[accounts]]\nname = "shared"\n${o.account}\n\n${chains.join('\n')}`,
  );
}

/** One call to `chain` on the proxy at `url`: its status and the node that answered. */
export function call(
  url: string,
  chain: Chain,
  id: number,
  /** A connection of its own (workers: each new connection may reach another worker). */
  fresh = false,
): Promise<{ status: number; node: string }> {
  const body = `{"jsonrpc":"2.0","id":${id},"method":"${METHOD[chain]}","params":[]}`;
  if (!fresh)
    return fetch(`${url}/${chain}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    }).then(
      async (response) => {
        await response.text();
        return { status: response.status, node: response.headers.get('x-cascade-node') ?? '' };
      },
      () => ({ status: 0, node: '' }),
    );
  return new Promise((resolve) => {
    const req = request(
      `${url}/${chain}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, node: String(res.headers['x-cascade-node']) }),
        );
      },
    );
    req.on('error', () => resolve({ status: 0, node: '' }));
    req.end(body);
  });
}

/** Calls each upstream received per chain, from a recording upstream's paths. */
export function perChain(paths: readonly string[]): Record<Chain, number> {
  return {
    sol: paths.filter((path) => path === '/sol').length,
    evm: paths.filter((path) => path === '/evm').length,
  };
}

/** The credits those calls cost: what the account must have booked for them. */
export function creditsOf(counts: Record<Chain, number>): number {
  return counts.sol * PRICE.sol + counts.evm * PRICE.evm;
}

/** A quotas.json as written: usage per entry. */
export type QuotasFile = Record<string, { used: number; period_start: string; unsent?: number }>;
