/**
 * `cascade serve` (the built dist/cli.js) in front of one upstream, as the large-answer
 * benchmarks (bench:big-answer, bench:compression) run it. Run from the repository root.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnServe, type ServeChild } from './hotpath-targets.js';

const REPO_ROOT = path.resolve('.');

/**
 * Writes a config with one node `big` at `upstreamUrl` into `dir` (plus `serverToml`, extra
 * [server] lines) and starts `cascade serve` on it; resolves with the process and its URL.
 */
export function startOneNodeProxy(
  dir: string,
  upstreamUrl: string,
  serverToml = '',
): Promise<ServeChild> {
  const config = path.join(dir, 'config.toml');
  const prices = path.join(REPO_ROOT, 'config/provider_config/solana.toml');
  writeFileSync(
    config,
    `[server]\nhost = "127.0.0.1"\nport = 0\n${serverToml}` +
      `[[nodes]]\nname = "big"\nurl = "${upstreamUrl}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "${prices}"\n`,
  );
  return spawnServe(REPO_ROOT, config, dir);
}
