/**
 * `latest`, `safe` and `finalized` of an eth_getLogs filter as concrete blocks (issue 29), so a
 * range can be cut: from the chain state the traffic built (core/chain) when a node showed that
 * head within the last second, else from one routed call — `eth_blockNumber`, or
 * `eth_getBlockByNumber(tag)` — served like any request (cached, coalesced, priced).
 */
import { Bound, Family, Level, headSlot } from '../chain/chain-state.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { BlockTag, blockNumberOfResult, resultNumberOf } from '../protocol/head-scan.js';
import type { LogsFilter } from '../protocol/logs-range.js';
import { STANDARD_METHODS } from '../protocol/method-registry.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import type { RouteCallback, RouteResult } from '../routing/route-context.js';
import type { Router } from './serve-request.js';
import type { ServingContext } from './serving-context.js';

/** The serving layer's path past the key check: cache, coalescing, routing by `router`. */
export type ServeOpen = <T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  onRouted: RouteCallback<T>,
  token: T,
  router?: Router,
) => void;

/** What resolving cost, added to the request's own totals. */
export interface Tally {
  attempts: number;
  credits: number;
}

/** A head seen this recently is taken as the tag's block; older ones are asked for again. */
const FRESH_MS = 1000;

const LEVELS: ReadonlyMap<number, { level: Level; tag: string }> = new Map([
  [BlockTag.latest, { level: Level.latest, tag: 'latest' }],
  [BlockTag.safe, { level: Level.safe, tag: 'safe' }],
  [BlockTag.finalized, { level: Level.finalized, tag: 'finalized' }],
]);

function requestOf(method: string, params: string): RpcRequest {
  return {
    body: Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`),
    method,
    methodId: STANDARD_METHODS.indexOf(method),
    batch: undefined,
  };
}

/** Serves `request` and resolves with how it ended. */
export function served(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  serveOpen: ServeOpen,
  router?: Router,
): Promise<RouteResult> {
  return new Promise((resolve) =>
    serveOpen(request, headers, ctx, (result: RouteResult) => resolve(result), undefined, router),
  );
}

/** The block a tag stands for now, or undefined when nobody could say. */
async function resolveTag(
  block: number,
  headers: ForwardHeaders,
  ctx: ServingContext,
  serveOpen: ServeOpen,
  tally: Tally,
): Promise<number | undefined> {
  if (block >= 0) return block;
  const level = LEVELS.get(block);
  if (level === undefined) return undefined;
  const now = ctx.route.clock.now();
  const known = ctx.route
    .table()
    .chain?.recentHead(headSlot(Family.evm, level.level), now, FRESH_MS);
  if (known !== undefined && known >= 0) return known;
  const latest = level.level === Level.latest;
  const request = latest
    ? requestOf('eth_blockNumber', '[]')
    : requestOf('eth_getBlockByNumber', `["${level.tag}",false]`);
  const result = await served(request, headers, ctx, serveOpen);
  tally.attempts += result.attempts;
  tally.credits += result.credits;
  if (result.kind !== 'answer' || !Buffer.isBuffer(result.body)) return undefined;
  const number = latest ? resultNumberOf(result.body) : blockNumberOfResult(result.body);
  return number >= 0 ? number : undefined;
}

/**
 * The highest block any node of the chain is known to have reached, however long ago it
 * showed it (a head it reported, a block it served logs of), or -1: heads only move on, so a
 * range ending at or below it ends at or below the chain's head now.
 */
export function reachedBlock(
  ctx: ServingContext,
  slot = headSlot(Family.evm, Level.latest),
): number {
  const chain = ctx.route.table().chain;
  if (chain === undefined) return -1;
  let reached = -1;
  for (const heads of chain.all()) {
    if (heads.wrongChain || heads.bound[slot] === Bound.below) continue;
    reached = Math.max(reached, heads.values[slot]!);
  }
  return reached;
}

/**
 * The chain's head as `latest` is resolved (chain state when fresh, else one routed
 * eth_blockNumber), or undefined when nobody could say.
 */
export function chainHead(
  headers: ForwardHeaders,
  ctx: ServingContext,
  serveOpen: ServeOpen,
  tally: Tally,
): Promise<number | undefined> {
  return resolveTag(BlockTag.latest, headers, ctx, serveOpen, tally);
}

/**
 * The filter's range as blocks, or undefined when it is one block, has no concrete end
 * (`pending`), or a tag could not be resolved: then it goes on as the client wrote it.
 */
export async function resolveRange(
  logs: LogsFilter,
  headers: ForwardHeaders,
  ctx: ServingContext,
  serveOpen: ServeOpen,
  tally: Tally,
): Promise<readonly [number, number] | undefined> {
  if (logs.from === logs.to || logs.from === BlockTag.other || logs.to === BlockTag.other) {
    return undefined;
  }
  const from = await resolveTag(logs.from, headers, ctx, serveOpen, tally);
  const to = await resolveTag(logs.to, headers, ctx, serveOpen, tally);
  return from === undefined || to === undefined ? undefined : [from, to];
}
