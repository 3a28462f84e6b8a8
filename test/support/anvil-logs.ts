/**
 * Logs on a real EVM node for the eth_getLogs tests (issue 29): blocks mined with `anvil_mine`,
 * and every so often a contract creation whose init code emits two LOG1s — (n, topic 1) and
 * (n, topic 2) — in one transaction, so a wide range holds logs spread over many blocks, and a
 * block holds more than one log (their order within the block must survive a split).
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { minedIn, startAnvil, type Anvil } from './anvil.js';
import type { LogsStage } from './logs-stage.js';
import { closeUpstreams } from './upstreams.js';

const TOPIC_A = '0x0000000000000000000000000000000000000000000000000000000000000001';

/** Init code: MSTORE(0, n); LOG1(0, 32, 1); LOG1(0, 32, 2); STOP. */
function initCode(n: number): string {
  const byte = (n & 0xff).toString(16).padStart(2, '0');
  return `0x60${byte}600052600160206000a1600260206000a100`;
}

/** Where the logs are: the blocks holding them, and the chain's head. */
export interface LoggedChain {
  readonly logBlocks: readonly number[];
  readonly head: number;
  /** The topic every first log of a pair carries (for a topics filter). */
  readonly topic: string;
}

/**
 * Mines `blocks` blocks on `anvil`, with a logging transaction every `every` blocks (from the
 * first), and returns where the logs landed.
 */
export async function mineLogs(anvil: Anvil, blocks: number, every: number): Promise<LoggedChain> {
  const [from] = (await anvil.call('eth_accounts')) as string[];
  const logBlocks: number[] = [];
  const blockNumber = async (): Promise<number> =>
    Number.parseInt((await anvil.call('eth_blockNumber')) as string, 16);
  let head = await blockNumber();
  const end = head + blocks;
  let n = 0;
  while (head < end) {
    const hash = await anvil.call('eth_sendTransaction', [
      { from, data: initCode(n++), gas: '0x30000' },
    ]);
    // anvil answers with the hash and may mine the block a moment later (a busy machine):
    // the receipt says where the logs landed, and anvil_mine must not start before it.
    head = await minedIn(anvil, hash as string);
    logBlocks.push(head);
    const gap = Math.min(every - 1, end - head);
    if (gap > 0) {
      await anvil.call('anvil_mine', [`0x${gap.toString(16)}`]);
      head = await blockNumber();
    }
  }
  return { logBlocks, head, topic: TOPIC_A };
}

/** A test file's logged anvil and the cascade stage of its current test. */
export interface LoggedAnvil {
  anvil: Anvil | undefined;
  /** Set once anvil is mined (read it only where anvil is available). */
  chain: LoggedChain;
  /** The test's stage: closed (with the upstreams the test started) after each test. */
  stage: LogsStage | undefined;
}

/**
 * Starts one anvil for the file (`args`), mines `blocks` with logs every `every`, and after each
 * test closes its stage and upstreams; stops anvil at the end. Nothing runs when `unavailable`.
 */
export function useLoggedAnvil(
  unavailable: string | undefined,
  args: string[],
  blocks: number,
  every: number,
): LoggedAnvil {
  const fixture: LoggedAnvil = {
    anvil: undefined,
    chain: { logBlocks: [], head: -1, topic: TOPIC_A },
    stage: undefined,
  };
  beforeAll(async () => {
    if (unavailable !== undefined) return;
    fixture.anvil = await startAnvil(args);
    fixture.chain = await mineLogs(fixture.anvil, blocks, every);
  }, 120_000);
  afterEach(async () => {
    await fixture.stage?.close();
    fixture.stage = undefined;
    await closeUpstreams();
  });
  afterAll(async () => {
    await fixture.anvil?.stop();
  });
  return fixture;
}
