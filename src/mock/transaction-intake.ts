/**
 * How a node takes in submitted transactions: it admits each to its mempool (its own or one
 * shared with other nodes) and answers a resubmission with its client's "already known" (EVM,
 * per the node's evmClient) or agave's AlreadyProcessed (Solana).
 */
import type { ChainView } from './chain-clock.js';
import { ALREADY_KNOWN } from './evm-errors.js';
import type { MockMempool, TransactionChain } from './mempool.js';
import type { MethodContext } from './method-spec.js';
import { ALREADY_PROCESSED } from './solana-errors.js';
import type { EvmClient } from './types.js';

/** The counters intake updates (the node's StatsCounter). */
interface IntakeCounters {
  accepted: number;
  alreadyKnown: number;
}

/** The method context of node `name`: the shared chain clock and its mempool. */
export function nodeMethodContext(
  name: string,
  chain: ChainView,
  mempool: MockMempool,
  evmClient: () => EvmClient,
  counters: IntakeCounters,
): MethodContext {
  return {
    chain,
    admit(kind: TransactionChain, id: string) {
      const admitted = mempool.admit(kind, id, name);
      if (admitted) counters.accepted++;
      return admitted;
    },
    alreadyKnown(kind: TransactionChain) {
      counters.alreadyKnown++;
      return kind === 'evm' ? ALREADY_KNOWN[evmClient()] : ALREADY_PROCESSED;
    },
  };
}
