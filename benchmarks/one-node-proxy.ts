/**
 * `cascade serve` (the built dist/cli.js) in front of one upstream, as the large-answer
 * benchmarks (bench:big-answer, bench:compression) run it. Run from the repository root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve('.');

/**
 * Writes a config with one node `big` at `upstreamUrl` into `dir` (plus `serverToml`, extra
 * [server] lines) and starts `cascade serve` on it; resolves with the process and its URL.
 */
export function startOneNodeProxy(
  dir: string,
  upstreamUrl: string,
  serverToml = '',
): Promise<{ child: ChildProcess; url: string }> {
  const config = path.join(dir, 'config.toml');
  const prices = path.join(REPO_ROOT, 'config/provider_config/solana.toml');
  writeFileSync(
    config,
    `[server]\nhost = "127.0.0.1"\nport = 0\n${serverToml}` +
      `[[nodes]]\nname = "big"\nurl = "${upstreamUrl}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "${prices}"\n`,
  );
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'dist/cli.js'), 'serve', '--config', config],
    { cwd: dir, env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n').find((l) => l.includes('cascade serving'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`cascade serve exited (${code})`)));
  });
}
