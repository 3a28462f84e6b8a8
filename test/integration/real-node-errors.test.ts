/**
 * Two sources that know nothing of each other meet here: the mock nodes' error presets (taken
 * from the clients' own source, see src/mock/*-errors.ts) and cascade's error table. Each
 * preset, answered by a tier-0 node, must be attributed as the table promises.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorFault } from '../../src/core/protocol/upstream-errors.js';
import { NODE_ERROR_NAMES } from '../../src/mock/index.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Whose fault each preset is. */
const EXPECTED: Record<string, Exclude<ErrorFault, 'unknown'>> = {
  'geth.revert': 'request',
  'geth.revert_plain': 'request',
  'geth.insufficient_funds': 'request',
  'geth.nonce_too_low': 'request',
  'geth.replacement_underpriced': 'request',
  'geth.intrinsic_gas': 'request',
  'geth.fee_cap_too_low': 'request',
  'geth.already_known': 'request',
  'nethermind.already_known': 'request',
  'besu.already_known': 'request',
  'erigon.already_known': 'request',
  'reth.already_known': 'request',
  'anvil.already_known': 'request',
  'geth.header_not_found': 'node_state',
  'geth.missing_trie_node': 'node_state',
  'geth.beyond_head': 'node_state',
  'hardhat.revert': 'request',
  'solana.custom_program_error': 'request',
  'solana.already_processed': 'request',
  'solana.blockhash_not_found': 'node_state',
  'solana.signature_verification': 'request',
  'solana.block_not_available': 'node_state',
  'solana.node_behind': 'node_unhealthy',
  'solana.node_unhealthy': 'node_unhealthy',
  'solana.slot_skipped': 'node_state',
  'solana.long_term_storage_slot_skipped': 'node_state',
  'solana.block_status_not_available_yet': 'node_state',
  'solana.min_context_slot': 'node_state',
  'alchemy.rate_limit': 'rate_limited',
  'infura.rate_limit': 'rate_limited',
  'rpcpool.rate_limit': 'rate_limited',
  // eth_getLogs limits (issue 29): another node (or a smaller range) serves it; no penalty.
  'alchemy.logs_range': 'node_state',
  'infura.logs_results': 'node_state',
  'infura.logs_range': 'node_state',
  'quicknode.logs_range': 'node_state',
  'geth.logs_results': 'node_state',
};

describe("real nodes' errors, attributed", () => {
  it('knows every preset the mocks have', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...NODE_ERROR_NAMES].sort());
  });

  it.each(Object.entries(EXPECTED))('%s is %s', async (preset, fault) => {
    const h = (harness = await startHarness([
      { name: 'a', tier: 0, mock: { methodErrors: { getSlot: preset } } },
      { name: 'b', tier: 1 },
    ]));
    const answer = await h.post(rpc('getSlot', 1));
    const body = answer.json as { error?: { code: number }; result?: unknown };
    const a = (await h.health()).nodes.find((n) => n.name === 'a')!.status;
    if (fault === 'request') {
      expect(body.error).toBeDefined();
      expect(h.mocks.b!.stats().requests).toBe(0);
      expect(a).not.toBe('down');
    } else {
      expect(body.result).toBeDefined();
      expect(h.mocks.b!.stats().requests).toBe(1);
      expect(a === 'down').toBe(fault !== 'node_state');
    }
  });
});
