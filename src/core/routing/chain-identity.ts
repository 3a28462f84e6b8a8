/**
 * `[server] expect_chain` (issue 26): each node is asked once, when it is added (start,
 * reload), which chain it is on — one `eth_chainId` (an EVM chain id was configured) or one
 * `getGenesisHash` (a Solana genesis hash) — booked like any call. A node on another chain is
 * never used: admission passes over it as it does a retired node, and /health, the log and the
 * chain head leave it out. A node that cannot be asked (down, unpriced) is not judged: it is
 * used as before and says so in the log.
 */
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import type { AttemptResponse } from '../node/attempt-response.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { MethodRegistry } from '../protocol/method-registry.js';

/** What a node's answer is compared with. */
export interface ExpectedChain {
  readonly method: 'eth_chainId' | 'getGenesisHash';
  /** The chain id as a number (EVM), or the genesis hash (Solana). */
  readonly value: string;
}

/** An EVM chain id (decimal or 0x hex) or a Solana genesis hash (base58). */
export function expectedChainOf(text: string): ExpectedChain {
  const trimmed = text.trim();
  if (/^(0x[0-9a-fA-F]+|\d+)$/.test(trimmed)) {
    return { method: 'eth_chainId', value: String(BigInt(trimmed)) };
  }
  return { method: 'getGenesisHash', value: trimmed };
}

/** How one node's check ended. */
export type IdentityResult =
  | { readonly kind: 'same' }
  | { readonly kind: 'other'; readonly got: string }
  | { readonly kind: 'unknown'; readonly reason: string };

const REGISTRY = new MethodRegistry();
const CHECK_TIMEOUT_MS = 5000;

function answerOf(response: AttemptResponse, expected: ExpectedChain): IdentityResult {
  if (response.kind !== 'answer') {
    return {
      kind: 'unknown',
      reason: response.kind === 'stream' ? 'answer too large' : response.kind,
    };
  }
  let result: unknown;
  try {
    result = (JSON.parse(response.body.toString('utf8')) as { result?: unknown }).result;
  } catch {
    return { kind: 'unknown', reason: `HTTP ${response.status}, not JSON` };
  }
  if (typeof result !== 'string')
    return { kind: 'unknown', reason: `HTTP ${response.status}, no result` };
  let got = result;
  if (expected.method === 'eth_chainId') {
    try {
      got = String(BigInt(result));
    } catch {
      return { kind: 'unknown', reason: `chain id ${result}` };
    }
  }
  return got === expected.value ? { kind: 'same' } : { kind: 'other', got };
}

/**
 * Asks `node` which chain it is on. While the check runs the node is held out (an added node
 * is not used before it is known to be on the right chain); the result decides after.
 */
export function checkChainIdentity(
  node: UpstreamNode,
  expected: ExpectedChain,
): Promise<IdentityResult> {
  const methodId = REGISTRY.idOf(expected.method);
  const cost = priceOf(node.config.pricing, methodId);
  if (cost === UNPRICED) {
    return Promise.resolve({ kind: 'unknown', reason: `${expected.method} is not priced` });
  }
  node.heads.wrongChain = true;
  // A reload may bill the node to another account before the answer: refund what was charged.
  const usage = node.usage;
  usage.add(cost);
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${expected.method}","params":[]}`);
  return new Promise((resolve) => {
    node.transport.send(
      body,
      CHECK_TIMEOUT_MS,
      undefined,
      false,
      (response: AttemptResponse) => {
        if (response.kind === 'transport_error' && !response.sent) usage.add(-cost);
        const result = answerOf(response, expected);
        node.heads.wrongChain = result.kind === 'other';
        resolve(result);
      },
      undefined,
    );
  });
}

/** Where the checks say what they found (a pino logger). */
export interface IdentityLog {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Asks each of `nodes` once which chain it is on, when `[server] expect_chain` is set. */
export async function checkChains(
  nodes: readonly UpstreamNode[],
  expect: string | undefined,
  log: IdentityLog,
): Promise<void> {
  if (expect === undefined) return;
  const expected = expectedChainOf(expect);
  await Promise.all(
    nodes.map(async (node) => {
      const result = await checkChainIdentity(node, expected);
      const fields = { node: node.name, method: expected.method };
      if (result.kind === 'other') {
        log.error(
          { ...fields, expected: expected.value, got: result.got },
          'node is on another chain; it is never used',
        );
      } else if (result.kind === 'unknown') {
        log.warn(
          { ...fields, reason: result.reason },
          'could not check which chain the node is on; used unchecked',
        );
      }
    }),
  );
}
