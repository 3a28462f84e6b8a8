/**
 * Upstream nodes for unit tests of the routing rules: real UpstreamNode objects on a
 * ManualClock, with a usage counter the test sets and the skips they count kept in order.
 */
import type { ManualClock } from '../../src/core/clock.js';
import type { NodeConfig, WsPrices } from '../../src/core/config/types.js';
import { DeadlineQueue } from '../../src/core/node/deadline-queue.js';
import { UpstreamNode } from '../../src/core/node/upstream-node.js';
import { nodeConfig, priceList } from './node-config.js';

/** A test node, its counted skips (SkipReason values) and a settable usage. */
export interface FakeNode {
  readonly node: UpstreamNode;
  readonly skips: number[];
  /** Sets the credits the node has used. */
  readonly use: (credits: number) => void;
}

/** Free [websocket] prices: the node takes subscriptions. */
export const FREE_WS: WsPrices = {
  connection: 0,
  subscribe: 0,
  unsubscribe: 0,
  notification: 0,
  tenthMb: 0,
};

/**
 * Makes fake nodes on `clock`; `close` releases their HTTP pools (call it after each test).
 * Options: `prices` (method → credits; other methods unpriced unless `unknownCost`), `ws`
 * (the [websocket] table, or null for none), any NodeConfig field.
 */
export function fakeNodes(clock: ManualClock): {
  make(
    name: string,
    options?: Partial<Omit<NodeConfig, 'pricing'>> & {
      prices?: Record<string, number>;
      unknownCost?: number;
      ws?: WsPrices | null;
    },
  ): FakeNode;
  close(): Promise<void>;
} {
  const made: UpstreamNode[] = [];
  const deps = { clock, deadlines: new DeadlineQueue(clock) };
  return {
    make(name, options = {}) {
      const { prices = {}, unknownCost = 1, ws = FREE_WS, ...rest } = options;
      const skips: number[] = [];
      let used = 0;
      const pricing = { ...priceList(prices, unknownCost), websocket: ws ?? undefined };
      const node = new UpstreamNode(
        nodeConfig({ name, ...rest, pricing }),
        {
          get used() {
            return used;
          },
          add(credits) {
            used += credits;
          },
        },
        { attempt: () => {}, skip: (reason) => skips.push(reason), streamBroken: () => {} },
        deps,
      );
      made.push(node);
      return { node, skips, use: (credits) => (used = credits) };
    },
    async close() {
      await Promise.all(made.splice(0).map((node) => node.transport.close()));
    },
  };
}
