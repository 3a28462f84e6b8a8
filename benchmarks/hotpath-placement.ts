/**
 * What the hot-path benchmarks share: the request body they send and where their processes run
 * (the harness, load generator and mocks on CPU 0; the proxies under test on CPU 1).
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

/**
 * A getBalance in the member order most clients send (viem, ethers, @solana/kit, every curl
 * example): `jsonrpc`, `id`, `method`, `params`. (web3.js v1 puts `method` first, which both
 * proxies read with a leading-bytes scan; this order needs the whole body validated, as
 * behaviour.md §4.1's fallback does.)
 */
export const BODY =
  '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}';
/** The CPU the proxies under test are pinned to (everything else of the benchmark: CPU 0). */
export const PROXY_CPU = 1;
/** The first line a tool prints about itself, or undefined when it cannot be run. */
export function toolVersion(command: string, args: string[]): string | undefined {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) return undefined;
  return `${result.stdout}${result.stderr}`.split('\n')[0]?.trim();
}

/** Pins this process (and so the load generator and mocks it starts) to CPU 0. */
export function placeProcesses(): {
  pin: string[];
  proxyCpu: number | undefined;
  placement: string;
} {
  const cpus = os.availableParallelism();
  if (cpus < 2) return { pin: [], proxyCpu: undefined, placement: `unpinned (${cpus} CPU)` };
  if (toolVersion('taskset', ['-V']) === undefined) {
    return { pin: [], proxyCpu: undefined, placement: 'unpinned (taskset not installed)' };
  }
  spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
  return {
    pin: ['taskset', '-c', String(PROXY_CPU)],
    proxyCpu: PROXY_CPU,
    placement: `proxies under test on CPU ${PROXY_CPU}; load generator, mock nodes and harness on CPU 0`,
  };
}
