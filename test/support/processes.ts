/** Process helpers for the deploy e2e tests: PID namespaces, child pids, one JSON POST. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { onPath } from './on-path.js';

/**
 * The command line that runs a program as PID 1 of a new PID namespace, as a container does
 * (`unshare --pid --fork`; --kill-child so nothing outlives the test), or undefined where
 * unshare is missing or not allowed (no privilege, no user namespaces).
 */
export function unsharePidNamespace(): string[] | undefined {
  const unshare = onPath('unshare');
  if (!unshare) return undefined;
  const launcher = [unshare, '--pid', '--fork', '--kill-child'];
  const probe = spawnSync(launcher[0]!, [...launcher.slice(1), 'true'], { timeout: 5000 });
  return probe.status === 0 ? launcher : undefined;
}

/** The pid (as this process sees it) of the only child of `pid`; waits up to 5 s for it. */
export async function childPid(pid: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    } catch {
      // not there yet
    }
    if (children !== '') return Number(children.split(/\s+/)[0]);
    if (Date.now() > deadline) throw new Error(`process ${pid} has no child`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** POSTs a JSON body; resolves with the status and the parsed answer. */
export async function postJson(
  url: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}
