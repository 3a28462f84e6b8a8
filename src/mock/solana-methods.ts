/**
 * Solana JSON-RPC methods with answers shaped exactly like a mainnet node's, so
 * `@solana/web3.js` and friends accept them. Numbers move with the shared chain clock.
 */
import { base58Of } from './encoding.js';
import {
  configAt,
  integerAt,
  paramAt,
  stringAt,
  type MethodContext,
  type MethodSpec,
} from './method-spec.js';
import {
  accountJson,
  paddedAccountJson,
  paddedProgramAccountsJson,
  programAccountsJson,
  tokenAccountJson,
  walletAccountJson,
  withContext,
} from './solana-accounts.js';
import { sendTransaction, simulationJson, transactionJson } from './solana-transaction.js';

const GENESIS_HASH = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
/** devnet's, for a node on another chain (behaviour `otherChain`). */
const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
const IDENTITY = base58Of('identity');
const VERSION = '{"feature-set":3271415109,"solana-core":"2.1.21"}';
const LAMPORTS_PER_BYTE_YEAR_X2 = 6960;
const ACCOUNT_OVERHEAD = 128;
/** Average size of one getSignaturesForAddress entry, for padding. */
const SIGNATURE_ENTRY_BYTES = 190;

const constant = (json: string): MethodSpec => ({ result: () => json });
const slotOf = (ctx: MethodContext): number => ctx.chain.slot();

function blockhashOf(slot: number): string {
  return base58Of(`bh:${slot}`);
}

function signaturesJson(address: string, count: number, ctx: MethodContext): string {
  const slot = slotOf(ctx);
  const entries = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const at = slot - 1 - i * 3;
    entries[i] =
      `{"blockTime":${ctx.chain.slotTime(at)},"confirmationStatus":"finalized","err":null,` +
      `"memo":null,"signature":"${base58Of(`${address}/${i}`, 64)}","slot":${at}}`;
  }
  return `[${entries.join(',')}]`;
}

function statusJson(slot: number): string {
  return `{"confirmationStatus":"finalized","confirmations":null,"err":null,"slot":${slot},"status":{"Ok":null}}`;
}

/**
 * A transaction a node accepted is unknown (null) until it lands, then finalized in its slot;
 * any other signature is an old, finalized one (the history clients read back).
 */
function signatureStatusesJson(params: unknown, ctx: MethodContext): string {
  const signatures = paramAt(params, 0);
  const list: unknown[] = Array.isArray(signatures) ? signatures : [];
  const old = statusJson(slotOf(ctx) - 2);
  const entries = list.map((signature) => {
    const state =
      typeof signature === 'string' ? ctx.transactionStatus?.('solana', signature) : undefined;
    if (state === undefined) return old;
    return state === 'pending' ? 'null' : statusJson(state.slot);
  });
  return withContext(slotOf(ctx), `[${entries.join(',')}]`);
}

function multipleAccountsJson(params: unknown, ctx: MethodContext): string {
  const keys = paramAt(params, 0);
  const encoding = configAt(params, 1).encoding;
  const count = Array.isArray(keys) ? keys.length : 0;
  return withContext(
    slotOf(ctx),
    `[${new Array<string>(count).fill(walletAccountJson(encoding)).join(',')}]`,
  );
}

function programAccounts(params: unknown, ctx: MethodContext, body: string): string {
  return configAt(params, 1).withContext === true ? withContext(slotOf(ctx), body) : body;
}

function prioritizationFeesJson(ctx: MethodContext): string {
  const slot = slotOf(ctx);
  const entries = new Array<string>(150);
  for (let i = 0; i < 150; i++) {
    entries[i] = `{"prioritizationFee":${(i * 7919) % 5000},"slot":${slot - 150 + i}}`;
  }
  return `[${entries.join(',')}]`;
}

function tokenAccountsJson(params: unknown, ctx: MethodContext, count: number): string {
  const owner = stringAt(params, 0, 'owner pubkey');
  const encoding = configAt(params, 2).encoding;
  const entries = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const account = tokenAccountJson(owner, encoding, 1_000_000 * (i + 1));
    entries[i] = `{"account":${account},"pubkey":"${base58Of(`${owner}/token/${i}`)}"}`;
  }
  return withContext(slotOf(ctx), `[${entries.join(',')}]`);
}

/** Solana method name → spec. */
export const SOLANA_METHOD_SPECS: ReadonlyArray<readonly [string, MethodSpec]> = [
  ['getHealth', constant('"ok"')],
  ['getSlot', { result: (_p, ctx) => String(slotOf(ctx)) }],
  ['getBlockHeight', { result: (_p, ctx) => String(ctx.chain.blockHeight()) }],
  ['getTransactionCount', { result: (_p, ctx) => String(slotOf(ctx) * 1200) }],
  ['getFirstAvailableBlock', constant('0')],
  ['minimumLedgerSlot', { result: (_p, ctx) => String(slotOf(ctx) - 500_000) }],
  [
    'getGenesisHash',
    {
      result: (_p, ctx) => `"${ctx.otherChain?.() === true ? DEVNET_GENESIS_HASH : GENESIS_HASH}"`,
    },
  ],
  ['getIdentity', constant(`{"identity":"${IDENTITY}"}`)],
  ['getSlotLeader', { result: (_p, ctx) => `"${base58Of(`leader:${slotOf(ctx) >> 2}`)}"` }],
  ['getVersion', constant(VERSION)],
  [
    'getEpochSchedule',
    constant(
      '{"firstNormalEpoch":0,"firstNormalSlot":0,"leaderScheduleSlotOffset":432000,"slotsPerEpoch":432000,"warmup":false}',
    ),
  ],
  [
    'getEpochInfo',
    {
      result: (_p, ctx) => {
        const e = ctx.chain.epoch();
        return (
          `{"absoluteSlot":${e.absoluteSlot},"blockHeight":${ctx.chain.blockHeight()},"epoch":${e.epoch},` +
          `"slotIndex":${e.slotIndex},"slotsInEpoch":${e.slotsInEpoch},"transactionCount":${e.absoluteSlot * 1200}}`
        );
      },
    },
  ],
  [
    'getBalance',
    {
      result: (params, ctx) => {
        stringAt(params, 0, 'pubkey');
        return withContext(slotOf(ctx), '2500000000');
      },
    },
  ],
  [
    'getLatestBlockhash',
    {
      result: (_p, ctx) => {
        const slot = slotOf(ctx);
        const value = `{"blockhash":"${blockhashOf(slot)}","lastValidBlockHeight":${ctx.chain.blockHeight() + 150}}`;
        return withContext(slot, value);
      },
    },
  ],
  ['isBlockhashValid', { result: (_p, ctx) => withContext(slotOf(ctx), 'true') }],
  ['getFeeForMessage', { result: (_p, ctx) => withContext(slotOf(ctx), '5000') }],
  [
    'getMinimumBalanceForRentExemption',
    {
      result: (params) =>
        String((ACCOUNT_OVERHEAD + integerAt(params, 0, 0)) * LAMPORTS_PER_BYTE_YEAR_X2),
    },
  ],
  [
    'getBlockTime',
    {
      result: (params, ctx) => String(ctx.chain.slotTime(integerAt(params, 0, slotOf(ctx)))),
    },
  ],
  [
    'getAccountInfo',
    {
      result: (params, ctx) => {
        const pubkey = stringAt(params, 0, 'pubkey');
        const encoding = configAt(params, 1).encoding;
        const changed = ctx.account?.(pubkey);
        const value = changed
          ? accountJson(changed.data, encoding, changed.lamports, changed.owner)
          : walletAccountJson(encoding);
        return withContext(slotOf(ctx), value);
      },
      padded: (bytes, params, ctx) =>
        withContext(slotOf(ctx), paddedAccountJson(String(paramAt(params, 0)), bytes)),
    },
  ],
  [
    'getMultipleAccounts',
    {
      result: multipleAccountsJson,
      padded: (bytes, params, ctx) =>
        withContext(slotOf(ctx), `[${paddedAccountJson(String(paramAt(params, 0)), bytes)}]`),
    },
  ],
  [
    'getProgramAccounts',
    {
      result: (params, ctx) => {
        const program = stringAt(params, 0, 'program id');
        const body = programAccountsJson(program, configAt(params, 1).encoding, 3);
        return programAccounts(params, ctx, body);
      },
      padded: (bytes, params, ctx) => {
        const program = typeof paramAt(params, 0) === 'string' ? String(paramAt(params, 0)) : '';
        return programAccounts(params, ctx, paddedProgramAccountsJson(program, bytes));
      },
    },
  ],
  [
    'getTokenAccountsByOwner',
    {
      result: (params, ctx) => tokenAccountsJson(params, ctx, 2),
      padded: (bytes, params, ctx) => tokenAccountsJson(params, ctx, Math.ceil(bytes / 700)),
    },
  ],
  [
    'getTokenAccountBalance',
    {
      result: (_p, ctx) =>
        withContext(
          slotOf(ctx),
          '{"amount":"1000000","decimals":6,"uiAmount":1,"uiAmountString":"1"}',
        ),
    },
  ],
  [
    'getSignaturesForAddress',
    {
      result: (params, ctx) => {
        const address = stringAt(params, 0, 'address');
        const limit = Math.min(integerAt([configAt(params, 1).limit], 0, 10), 1000);
        return signaturesJson(address, limit, ctx);
      },
      padded: (bytes, params, ctx) =>
        signaturesJson(String(paramAt(params, 0)), Math.ceil(bytes / SIGNATURE_ENTRY_BYTES), ctx),
    },
  ],
  ['getSignatureStatuses', { result: signatureStatusesJson }],
  [
    'getTransaction',
    {
      result: (params, ctx) => {
        const signature = stringAt(params, 0, 'signature');
        const slot = slotOf(ctx) - 32;
        return transactionJson(signature, slot, ctx.chain.slotTime(slot), configAt(params, 1));
      },
    },
  ],
  ['sendTransaction', { result: sendTransaction }],
  [
    'simulateTransaction',
    {
      result: (params, ctx) => {
        stringAt(params, 0, 'transaction');
        const replace = configAt(params, 1).replaceRecentBlockhash === true;
        return simulationJson(slotOf(ctx), ctx.chain.blockHeight(), replace);
      },
    },
  ],
  [
    'requestAirdrop',
    { result: (params) => `"${base58Of(`airdrop:${stringAt(params, 0, 'pubkey')}`, 64)}"` },
  ],
  ['getRecentPrioritizationFees', { result: (_p, ctx) => prioritizationFeesJson(ctx) }],
];
