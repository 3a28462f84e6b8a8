/**
 * `cascade serve --demo --admin-port 0` started as a user would, in a temporary working
 * directory (its quotas file and lock land there, so `cascade status` run in the same
 * directory finds it).
 */
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { startCli, type CliProcess } from './cli-process.js';

/** A running demo. */
export interface Demo {
  readonly process: CliProcess;
  readonly dir: TempDir;
  /** The proxy's URL. */
  readonly url: string;
  /** The admin listener's URL. */
  readonly admin: string;
  /** Stops it (SIGTERM) and removes its directory. */
  stop(): Promise<void>;
}

/** Starts the demo with an admin listener on a free port; `files` are written to its directory first. */
export async function startDemo(
  extra: readonly string[] = [],
  files: Readonly<Record<string, string>> = {},
): Promise<Demo> {
  const dir = makeTempDir('cascade-demo-');
  dir.write(files);
  const process = startCli(['serve', '--demo', '--port', '0', '--admin-port', '0', ...extra], {
    cwd: dir.dir,
  });
  const serving = await process.waitFor(/"url":"(http:\/\/[^"]+)".*(?:serving|share the port)/);
  const adminLine = await process.waitFor(/"url":"(http:\/\/[^"]+)\/admin\/nodes"/);
  return {
    process,
    dir,
    url: /"url":"(http:\/\/[^"]+)"/.exec(serving)![1]!,
    admin: /"url":"(http:\/\/[^"]+)\/admin\/nodes"/.exec(adminLine)![1]!,
    async stop() {
      if (process.child.exitCode === null) await process.stop('SIGTERM');
      dir.cleanup();
    },
  };
}

/** Sends `count` getSlot requests to `url`, one after another; resolves with the statuses. */
export async function sendRequests(url: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let id = 0; id < count; id++) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}`,
    });
    await response.text();
    statuses.push(response.status);
  }
  return statuses;
}
