import { describe, expect, it } from 'vitest';
import { UsageError } from '../core/index.js';
import { MockMempool } from '../mock/index.js';
import { faultOf, methodErrorsOf, planNodes, type MockTarget } from './mock-nodes-flags.js';

const TARGETS: MockTarget[] = [
  { name: 'a', host: '127.0.0.1', port: 1, https: false },
  { name: 'b', host: '127.0.0.1', port: 2, https: false },
];

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('mock-nodes flags', () => {
  it('binds every node at --host, keeping each config port; else at its config address', () => {
    const bound = planNodes({ host: '0.0.0.0' }, TARGETS);
    expect(bound.map((plan) => [plan.host, plan.port])).toEqual([
      ['0.0.0.0', 1],
      ['0.0.0.0', 2],
    ]);
    expect(planNodes({}, TARGETS).map((plan) => plan.host)).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('turns --method-error METHOD=PRESET[:ARG] into method errors for every node', () => {
    const plans = planNodes(
      {
        methodError: [
          'eth_call=geth.revert:Ownable: caller is not the owner',
          'getSlot=solana.node_behind:120',
        ],
      },
      TARGETS,
    );
    for (const plan of plans) {
      expect(plan.methodErrors).toEqual({
        eth_call: 'geth.revert:Ownable: caller is not the owner',
        getSlot: 'solana.node_behind:120',
      });
    }
  });

  it('turns --lag and --ahead into the lag of the --nodes in scope', () => {
    expect(planNodes({ lag: '200', nodes: 'a' }, TARGETS).map((plan) => plan.lag)).toEqual([
      200, 0,
    ]);
    expect(planNodes({ ahead: '1000000' }, TARGETS).map((plan) => plan.lag)).toEqual([
      -1_000_000, -1_000_000,
    ]);
    expect(usageMessage(() => planNodes({ lag: '-3' }, TARGETS))).toContain('--lag "-3"');
    expect(usageMessage(() => planNodes({ lag: '1', ahead: '2' }, TARGETS))).toContain('--ahead');
  });

  it('scopes method errors and faults to --nodes', () => {
    const plans = planNodes({ methodError: ['eth_call=geth.revert'], nodes: 'b' }, TARGETS);
    expect(plans.map((plan) => plan.methodErrors)).toEqual([{}, { eth_call: 'geth.revert' }]);
  });

  it('names the flag, the value and the presets on a bad --method-error', () => {
    expect(usageMessage(() => methodErrorsOf(['eth_call']))).toBe(
      '--method-error "eth_call": expected METHOD=PRESET[:ARG], e.g. eth_call=geth.revert or getSlot=solana.slot_skipped:123',
    );
    const unknown = usageMessage(() => methodErrorsOf(['eth_call=geth.revrt']));
    expect(unknown).toMatch(
      /^--method-error "eth_call=geth.revrt": unknown node error preset "geth.revrt"; presets: geth.revert, /,
    );
    expect(unknown).toContain('solana.min_context_slot');
    expect(usageMessage(() => methodErrorsOf(['getSlot=solana.slot_skipped:soon']))).toContain(
      'slot = "soon"; expected a whole number',
    );
  });

  it('checks --evm-client, --idle-close, --rpc-data and --nodes', () => {
    expect(usageMessage(() => planNodes({ evmClient: 'parity' }, TARGETS))).toBe(
      '--evm-client "parity": expected one of geth, nethermind, besu, erigon, reth, anvil',
    );
    expect(usageMessage(() => planNodes({ idleClose: '0' }, TARGETS))).toContain(
      '--idle-close "0"',
    );
    expect(usageMessage(() => faultOf({ fault: 'rpc_error', rpcData: '{oops' }))).toContain(
      '--rpc-data "{oops": expected a JSON value',
    );
    expect(usageMessage(() => faultOf({ rpcData: '1' }))).toBe('--rpc-data "1": needs --fault');
    expect(usageMessage(() => planNodes({ nodes: 'a' }, TARGETS))).toBe(
      '--nodes "a": needs --fault, --method-error, --lag, --ahead or --other-chain',
    );
  });

  it('passes --evm-client, --idle-close, --rpc-data and one --shared-mempool to every node', () => {
    const plans = planNodes(
      {
        evmClient: 'besu',
        idleClose: '2000',
        sharedMempool: true,
        fault: 'rpc_error',
        rpcData: '{"x":1}',
      },
      TARGETS,
    );
    expect(plans[0]).toMatchObject({
      evmClient: 'besu',
      idleCloseMs: 2000,
      fault: { kind: 'rpc_error', code: -32005, data: { x: 1 } },
    });
    expect(plans[0]!.mempool).toBeInstanceOf(MockMempool);
    expect(plans[1]!.mempool).toBe(plans[0]!.mempool);
    expect(planNodes({}, TARGETS)[0]!.mempool).toBeUndefined();
  });
});
