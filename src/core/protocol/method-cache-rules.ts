/**
 * The shipped cache and coalescing policy per method: what may be answered from the cache,
 * under which finality rule, and whether identical requests in flight may share one answer.
 *
 * The rules are conservative on purpose: an answer is cached only when it cannot change (a
 * chain constant, a Solana answer asked at `finalized`, an EVM object at or below the
 * finalized head) or for a TTL shorter than the chain's own tick (head-tracking reads). A
 * method that is not listed is neither cached nor coalesced: it is not known to be a read.
 */

/** How long an answer may be reused. */
export type CacheRuleKind = 'forever' | 'final' | 'ttl' | 'never';

/**
 * How a `final` answer proves it cannot change:
 * - `solana_commitment`: asked at `finalized` commitment (Solana's default) and not null;
 * - `evm_result_block`: the result's `blockNumber` (or `number`) is at or below the finalized head;
 * - `evm_param_block`: the block number asked for (params[0], a quantity) is at or below it;
 * - `evm_logs_range`: an eth_getLogs filter's `fromBlock` and `toBlock` are quantities and
 *   `toBlock` is at or below it (a chunk of a split range, issue 29, or any such query).
 */
export type FinalityCheck =
  'solana_commitment' | 'evm_result_block' | 'evm_param_block' | 'evm_logs_range';

/** One method's shipped rule. */
export interface MethodCacheRule {
  readonly cache: CacheRuleKind;
  readonly finality?: FinalityCheck;
  /** Identical requests in flight share one upstream answer. */
  readonly coalesce: boolean;
}

const FOREVER: MethodCacheRule = { cache: 'forever', coalesce: true };
const TTL: MethodCacheRule = { cache: 'ttl', coalesce: true };
const READ: MethodCacheRule = { cache: 'never', coalesce: true };
const SOLANA_FINAL: MethodCacheRule = {
  cache: 'final',
  finality: 'solana_commitment',
  coalesce: true,
};
const EVM_RESULT_FINAL: MethodCacheRule = {
  cache: 'final',
  finality: 'evm_result_block',
  coalesce: true,
};
const EVM_PARAM_FINAL: MethodCacheRule = {
  cache: 'final',
  finality: 'evm_param_block',
  coalesce: true,
};
const EVM_LOGS_FINAL: MethodCacheRule = {
  cache: 'final',
  finality: 'evm_logs_range',
  coalesce: true,
};

/**
 * Methods that change state or hand out something per call. Never cached or coalesced, and a
 * `[cache.methods]` override cannot make them so: two identical transactions sent at once are
 * the client's business, and each must reach a node.
 */
export const WRITE_METHODS: ReadonlySet<string> = new Set([
  'sendTransaction',
  'sendBundle',
  'sendStakedTransaction',
  'requestAirdrop',
  'signMessage',
  'signTransaction',
  'createWebhook',
  'updateWebhook',
  'deleteWebhook',
  'eth_sendRawTransaction',
  'eth_sendTransaction',
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v4',
  'personal_sign',
  'eth_subscribe',
  'eth_unsubscribe',
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_uninstallFilter',
]);

const SOLANA_READS = [
  'getAccountInfo',
  'getBalance',
  'getBlockCommitment',
  'getBlockProduction',
  'getBlockTime',
  'getBlocks',
  'getBlocksWithLimit',
  'getClusterNodes',
  'getEpochInfo',
  'getEpochSchedule',
  'getFeeForMessage',
  'getFirstAvailableBlock',
  'getHealth',
  'getHighestSnapshotSlot',
  'getIdentity',
  'getInflationGovernor',
  'getInflationRate',
  'getInflationReward',
  'getLargestAccounts',
  'getLatestBlockhash',
  'getLeaderSchedule',
  'getMaxRetransmitSlot',
  'getMaxShredInsertSlot',
  'getMinimumBalanceForRentExemption',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getRecentPerformanceSamples',
  'getRecentPrioritizationFees',
  'getSignatureStatuses',
  'getSignaturesForAddress',
  'getSlotLeader',
  'getSlotLeaders',
  'getStakeActivation',
  'getStakeMinimumDelegation',
  'getSupply',
  'getTokenAccountBalance',
  'getTokenAccountsByDelegate',
  'getTokenAccountsByOwner',
  'getTokenLargestAccounts',
  'getTokenSupply',
  'getTransactionCount',
  'getVersion',
  'getVoteAccounts',
  'isBlockhashValid',
  'minimumLedgerSlot',
  'getAsset',
  'getAssetBatch',
  'getAssetProof',
  'getAssetsByOwner',
  'getAssetsByGroup',
  'getAssetsByCreator',
  'getAssetsByAuthority',
  'searchAssets',
  'getPriorityFeeEstimate',
];

const EVM_READS = [
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_call',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_maxPriorityFeePerGas',
  'eth_blobBaseFee',
  'eth_syncing',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockReceipts',
  'eth_getProof',
  'net_listening',
  'net_peerCount',
  'web3_clientVersion',
];

/** The shipped rule of every method cascade knows to be a read. */
export const SHIPPED_CACHE_RULES: ReadonlyMap<string, MethodCacheRule> = new Map<
  string,
  MethodCacheRule
>([
  // Chain constants.
  ['getGenesisHash', FOREVER],
  ['eth_chainId', FOREVER],
  ['net_version', FOREVER],
  // Final once the chain says so.
  ['getTransaction', SOLANA_FINAL],
  ['getBlock', SOLANA_FINAL],
  ['eth_getTransactionReceipt', EVM_RESULT_FINAL],
  ['eth_getTransactionByHash', EVM_RESULT_FINAL],
  ['eth_getTransactionByBlockHashAndIndex', EVM_RESULT_FINAL],
  ['eth_getBlockByHash', EVM_RESULT_FINAL],
  ['eth_getBlockByNumber', EVM_PARAM_FINAL],
  ['eth_getTransactionByBlockNumberAndIndex', EVM_PARAM_FINAL],
  ['eth_getLogs', EVM_LOGS_FINAL],
  // Head-tracking reads: a TTL under one slot / one block.
  ['getSlot', TTL],
  ['getBlockHeight', TTL],
  ['eth_blockNumber', TTL],
  ['eth_gasPrice', TTL],
  ...SOLANA_READS.map((method): [string, MethodCacheRule] => [method, READ]),
  ...EVM_READS.map((method): [string, MethodCacheRule] => [method, READ]),
]);
