/** Upstream-error rows that are the node's side: throttling and missing data (upstream-errors.ts). */
import { row, type ErrorRule } from './error-rule.js';
import { LOGS_LIMIT_MESSAGE } from './logs-limit-errors.js';

/** Throttling and node-state rows, in match order. */
export const NODE_ERROR_RULES: readonly ErrorRule[] = [
  // ---- throttling: whatever the code, a provider telling us to slow down ----
  row(
    'rate_limited',
    'Alchemy (code 429 in the body)',
    undefined,
    { code: 429, message: 'Your app has exceeded its compute units per second capacity' },
    [429],
  ),
  row(
    'rate_limited',
    'providers (Infura, QuickNode, Helius…)',
    /rate.?limit|rate exceeded|too many requests|request limit reached|limit exceeded|exceeded .*(rate|limit|quota|capacity)|throttl/i,
    { code: -32005, message: 'Too many requests for a specific RPC call' },
  ),
  // ---- a range limit: this node will not serve this eth_getLogs at this size ----
  // (checked before the client codes: Alchemy sends it as -32600, Infura as -32602)
  row(
    'node_state',
    "Alchemy, Infura, QuickNode, geth, erigon, reth (eth_getLogs over the node's range or result limit)",
    LOGS_LIMIT_MESSAGE,
    {
      code: -32600,
      message:
        'You can make eth_getLogs requests with up to a 2000 block range. Based on your parameters, this block range should work: [0x1, 0x7d0]',
    },
  ),
  // ---- node state: this node lacks the data now; another may have it ----
  row(
    'node_state',
    'agave (a node behind the cluster does not know a recent blockhash)',
    /blockhash not found/i,
    { code: -32002, message: 'Transaction simulation failed: Blockhash not found' },
  ),
  row('node_state', 'geth, erigon, reth', /^header not found/i, {
    code: -32000,
    message: 'header not found',
  }),
  row('node_state', 'geth, erigon (pruned state)', /^missing trie node/i, {
    code: -32000,
    message: 'missing trie node 5a4c…ab (path ) state 0x5a4c… is not available',
  }),
  row('node_state', 'geth', /^request beyond head block/i, {
    code: -32000,
    message: 'request beyond head block: requested 21000000, head 20999990',
  }),
  row(
    'node_state',
    'geth, reth, nethermind, besu',
    /^(unknown block|block not found|historical state .* is not available|required historical state unavailable|state (is )?not available)/i,
    { code: -32000, message: 'historical state 0x8f1a… is not available' },
  ),
  row(
    'node_state',
    'agave',
    /^Block \d+ cleaned up/i,
    {
      code: -32001,
      message: 'Block 100 cleaned up, does not exist on node. First available block: 250000000',
    },
    [-32001],
  ),
  row(
    'node_state',
    'agave',
    /^Block not available for slot/i,
    { code: -32004, message: 'Block not available for slot 312345678' },
    [-32004],
  ),
  row(
    'node_unhealthy',
    'agave',
    /^Node is (unhealthy|behind)/i,
    { code: -32005, message: 'Node is behind by 42 slots', data: { numSlotsBehind: 42 } },
    [-32005],
  ),
  row(
    'node_state',
    'agave',
    /^Slot \d+ was skipped, or missing due to ledger jump/i,
    {
      code: -32007,
      message: 'Slot 312345678 was skipped, or missing due to ledger jump to recent snapshot',
    },
    [-32007],
  ),
  row('node_state', 'agave', /^No snapshot/i, { code: -32008, message: 'No snapshot' }, [-32008]),
  row(
    'node_state',
    'agave',
    /^Slot \d+ was skipped, or missing in long-term storage/i,
    { code: -32009, message: 'Slot 100 was skipped, or missing in long-term storage' },
    [-32009],
  ),
  row(
    'node_state',
    'agave (node without that secondary index)',
    /excluded from account secondary indexes/i,
    {
      code: -32010,
      message:
        'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA excluded from account secondary indexes; this RPC method unavailable for key',
    },
    [-32010],
  ),
  row(
    'node_state',
    'agave',
    /^Transaction history is not available/i,
    { code: -32011, message: 'Transaction history is not available from this node' },
    [-32011],
  ),
  row(
    'node_state',
    'agave',
    /^Block status not yet available|^BlockStatusNotAvailableYet/i,
    { code: -32014, message: 'Block status not yet available for slot 312345678' },
    [-32014],
  ),
  row(
    'node_state',
    'agave',
    /^Minimum context slot has not been reached/i,
    {
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: 312345600 },
    },
    [-32016],
  ),
  row(
    'node_state',
    'agave',
    /^Failed to query long-term storage/i,
    { code: -32019, message: 'Failed to query long-term storage; please try again' },
    [-32019],
  ),
];
