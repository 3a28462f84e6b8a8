/**
 * The realistic traffic mix the cache benchmark replays (benchmarks/bench-cache.ts): what a busy
 * dApp's users send through one proxy, generated from a fixed seed so every run replays the
 * same requests at the same offsets.
 *
 * Solana: page loads (genesis hash, a finalized blockhash, popular accounts, the user's own
 * balance and token accounts), wallets polling the slot, transactions sent then polled for
 * status and read back at `finalized` by the sender and by indexers, and an explorer reading
 * popular historic transactions. EVM: page loads (chain id, head, the user's balance and token
 * balance, gas price), clients polling the head, an indexer following the finalized block,
 * an explorer reading old blocks, receipts polled for pending transactions, transactions sent.
 */

/** One request of the mix: when (ms from the start) and what. */
export interface MixRequest {
  readonly at: number;
  readonly method: string;
  readonly params: unknown[];
}

/** A seeded generator (mulberry32): the same seed, the same mix. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(rand: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += BASE58[Math.floor(rand() * 58)];
  return text;
}

function hex(rand: () => number, bytes: number): string {
  let text = '0x';
  for (let i = 0; i < bytes; i++)
    text += Math.floor(rand() * 256)
      .toString(16)
      .padStart(2, '0');
  return text;
}

/** Index in [0, n) with a Zipf-like skew: a few popular items take most of the traffic. */
function zipf(rand: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(n * Math.pow(rand(), 2.5)));
}

/** Offsets of a Poisson process of `perSecond` events over `ms`. */
function poisson(rand: () => number, perSecond: number, ms: number): number[] {
  const times: number[] = [];
  for (let t = -Math.log(1 - rand()) * (1000 / perSecond); t < ms;) {
    times.push(t);
    t += -Math.log(1 - rand()) * (1000 / perSecond);
  }
  return times;
}

/** `clients` pollers, each every `periodMs` from a random phase. */
function pollers(rand: () => number, clients: number, periodMs: number, ms: number): number[] {
  const times: number[] = [];
  for (let c = 0; c < clients; c++) {
    for (let t = rand() * periodMs; t < ms; t += periodMs) times.push(t);
  }
  return times;
}

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const FINALIZED = { commitment: 'finalized' };

/** The Solana dApp mix over `ms`. */
export function solanaMix(ms: number, seed = 19): MixRequest[] {
  const rand = random(seed);
  const users = Array.from({ length: 200 }, () => base58(rand, 44));
  const popular = Array.from({ length: 30 }, () => base58(rand, 44));
  const history = Array.from({ length: 40 }, () => base58(rand, 88));
  const out: MixRequest[] = [];
  const add = (at: number, method: string, params: unknown[]) => out.push({ at, method, params });
  for (const t of poisson(rand, 10, ms)) {
    const user = users[Math.floor(rand() * users.length)]!;
    const jitter = () => t + rand() * 30;
    add(jitter(), 'getGenesisHash', []);
    add(jitter(), 'getLatestBlockhash', [FINALIZED]);
    for (let i = 0; i < 3; i++) {
      add(jitter(), 'getAccountInfo', [
        popular[zipf(rand, popular.length)],
        { encoding: 'base64' },
      ]);
    }
    add(jitter(), 'getMultipleAccounts', [popular.slice(0, 5), { encoding: 'base64' }]);
    add(jitter(), 'getBalance', [user]);
    add(jitter(), 'getTokenAccountsByOwner', [
      user,
      { programId: TOKEN_PROGRAM },
      { encoding: 'jsonParsed' },
    ]);
  }
  for (const t of pollers(rand, 40, 1000, ms)) add(t, 'getSlot', []);
  for (const t of pollers(rand, 10, 2000, ms)) add(t, 'getBlockHeight', [FINALIZED]);
  for (const t of poisson(rand, 2, ms)) {
    const signature = base58(rand, 88);
    add(t, 'sendTransaction', [base58(rand, 300), { encoding: 'base58' }]);
    for (let k = 1; k <= 4; k++) add(t + 400 * k, 'getSignatureStatuses', [[signature]]);
    for (let reader = 0; reader < 3; reader++) {
      add(t + 2000 + rand() * 1500, 'getTransaction', [
        signature,
        { commitment: 'finalized', maxSupportedTransactionVersion: 0 },
      ]);
    }
  }
  for (const t of poisson(rand, 6, ms)) {
    add(t, 'getTransaction', [
      history[zipf(rand, history.length)],
      { encoding: 'json', maxSupportedTransactionVersion: 0 },
    ]);
  }
  return out.filter((r) => r.at < ms).sort((a, b) => a.at - b.at);
}

/** The EVM dApp mix over `ms`. `oldestFinal` is a block number the chain has long finalized. */
export function evmMix(ms: number, oldestFinal: number, seed = 20): MixRequest[] {
  const rand = random(seed);
  const users = Array.from({ length: 200 }, () => hex(rand, 20));
  const token = hex(rand, 20);
  const out: MixRequest[] = [];
  const add = (at: number, method: string, params: unknown[]) => out.push({ at, method, params });
  for (const t of poisson(rand, 10, ms)) {
    const user = users[Math.floor(rand() * users.length)]!;
    const jitter = () => t + rand() * 30;
    add(jitter(), 'eth_chainId', []);
    add(jitter(), 'eth_blockNumber', []);
    add(jitter(), 'eth_getBalance', [user, 'latest']);
    const data = `0x70a08231${user.slice(2).padStart(64, '0')}`;
    add(jitter(), 'eth_call', [{ to: token, data }, 'latest']);
    add(jitter(), 'eth_gasPrice', []);
  }
  for (const t of pollers(rand, 40, 2000, ms)) add(t, 'eth_blockNumber', []);
  for (const t of pollers(rand, 2, 1000, ms)) add(t, 'eth_getBlockByNumber', ['finalized', false]);
  for (const t of poisson(rand, 8, ms)) {
    const n = oldestFinal - zipf(rand, 120);
    add(t, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
  }
  for (const t of poisson(rand, 1, ms)) {
    const hash = hex(rand, 32);
    add(t, 'eth_sendRawTransaction', [hex(rand, 110)]);
    for (let k = 1; k <= 4; k++) add(t + 500 * k, 'eth_getTransactionReceipt', [hash]);
  }
  return out.filter((r) => r.at < ms).sort((a, b) => a.at - b.at);
}
