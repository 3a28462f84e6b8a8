/**
 * The `[server]` keys of one chain: lag-aware routing (issue 26; README "Lag: how far behind a
 * node may be"): `max_lag`, `head_max_age_seconds`, `head_sample_percent`, `expect_chain`; and
 * the client-facing `max_logs_block_range` (issue 29). Defaults applied here, so the rest of
 * the proxy reads plain numbers.
 */
import type { ProblemList } from './problem-list.js';
import type { FieldReader } from './toml-fields.js';

/** Shipped `max_lag`: 50 slots (~20 s) on Solana, 4 blocks (~48 s) on Ethereum. */
export const DEFAULT_MAX_LAG: readonly [solana: number, evm: number] = [50, 4];
export const DEFAULT_HEAD_MAX_AGE_SECONDS = 60;
export const DEFAULT_HEAD_SAMPLE_PERCENT = 2;

export const CHAIN_KEYS = [
  'max_lag',
  'head_max_age_seconds',
  'head_sample_percent',
  'expect_chain',
  'max_logs_block_range',
] as const;

const CHAIN_ID = /^(0x[0-9a-fA-F]+|\d+)$/;
const GENESIS_HASH = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const EXPECT_HINT =
  'an EVM chain id (expect_chain = "1", or "0x1") or a Solana genesis hash (base58, e.g. "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d")';

export interface ChainFields {
  /** Slots (Solana) and blocks (EVM) a node may be behind for state reads. */
  readonly maxLag: readonly [solana: number, evm: number];
  /** A head sample older than this is forgotten: the node is unknown again. */
  readonly headMaxAgeSeconds: number;
  /** Share (%) of head-showing reads sent to a same-tier node whose head is unknown or old. */
  readonly headSamplePercent: number;
  /** The chain every node must be on (EVM chain id or Solana genesis hash); absent: unchecked. */
  readonly expectChain?: string;
  /** Most blocks a client may ask in one eth_getLogs (larger: refused); absent: no limit. */
  readonly maxLogsBlockRange?: number;
}

export const DEFAULT_CHAIN_FIELDS: ChainFields = {
  maxLag: DEFAULT_MAX_LAG,
  headMaxAgeSeconds: DEFAULT_HEAD_MAX_AGE_SECONDS,
  headSamplePercent: DEFAULT_HEAD_SAMPLE_PERCENT,
};

/** The keys as written; undefined when none is set (the shipped defaults apply). */
export function readChainFields(
  r: FieldReader,
  file: string,
  problems: ProblemList,
): ChainFields | undefined {
  const maxLag = r.integer('max_lag', {
    min: 0,
    max: 1_000_000,
    required: false,
    hint: `slots (Solana) or blocks (EVM) a node may be behind the chain's head for state reads (default ${DEFAULT_MAX_LAG[0]} slots, ${DEFAULT_MAX_LAG[1]} blocks)`,
  });
  const maxAge = r.integer('head_max_age_seconds', {
    min: 1,
    max: 86_400,
    required: false,
    hint: `seconds a head read from an answer stays valid (default ${DEFAULT_HEAD_MAX_AGE_SECONDS})`,
  });
  const sample = r.integer('head_sample_percent', {
    min: 0,
    max: 50,
    required: false,
    hint: `percent of head-showing reads sent to a same-tier node whose head is unknown, 0 turns it off (default ${DEFAULT_HEAD_SAMPLE_PERCENT})`,
  });
  const maxLogsBlockRange = r.integer('max_logs_block_range', {
    min: 1,
    max: 100_000_000,
    required: false,
    hint: 'the most blocks one client eth_getLogs may span (bigger ones are refused before any node is asked); omit it for no limit',
  });
  let expectChain = r.string('expect_chain', false, EXPECT_HINT);
  if (expectChain !== undefined && !CHAIN_ID.test(expectChain) && !GENESIS_HASH.test(expectChain)) {
    problems.error(
      file,
      `${r.prefix}.expect_chain`,
      `is neither a chain id nor a genesis hash: ${JSON.stringify(expectChain)}`,
      EXPECT_HINT,
    );
    expectChain = undefined;
  }
  if (
    maxLag === undefined &&
    maxAge === undefined &&
    sample === undefined &&
    expectChain === undefined &&
    maxLogsBlockRange === undefined
  ) {
    return undefined;
  }
  return {
    ...(expectChain === undefined ? {} : { expectChain }),
    ...(maxLogsBlockRange === undefined ? {} : { maxLogsBlockRange }),
    maxLag: maxLag === undefined ? DEFAULT_MAX_LAG : [maxLag, maxLag],
    headMaxAgeSeconds: maxAge ?? DEFAULT_HEAD_MAX_AGE_SECONDS,
    headSamplePercent: sample ?? DEFAULT_HEAD_SAMPLE_PERCENT,
  };
}
