/**
 * The `cascade mock-nodes` declaration: its many flags (faults, method errors, mempool, …).
 * Declarations only; the work is in commands/mock-nodes.ts, imported when the command runs.
 */
import type { Command } from 'commander';
import type { MockNodesOptions } from '../commands/mock-nodes.js';
import { examples, lazy } from './lazy-action.js';

/** Commander's collector for a repeatable flag. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Declares `mock-nodes` on `program`. */
export function declareMockNodes(program: Command): void {
  program
    .command('mock-nodes')
    .description('run mock upstream RPC nodes (Solana + EVM methods) for demos, tests and benches')
    .option(
      '-c, --config <path>',
      'start one mock per local node of this config (default: mock_nodes.toml)',
    )
    .option(
      '--host <host>',
      "listen address of every node (default: its config URL's; 0.0.0.0 in a container)",
    )
    .option('--delays <ms,ms,...>', 'latency per node in config order (missing = 0)')
    .option('--jitter <ms>', 'extra latency, uniform in [0, ms)')
    .option('--response-bytes <n>', 'pad every answer to about n bytes')
    .option('--tls', 'serve https with a generated self-signed certificate')
    .option('--rtt <ms>', 'simulate a network round trip (new connections pay the handshake)')
    .option(
      '--fault <kind>',
      'none|http|rpc_error|invalid_json|empty|stall|close|stall_body|truncate',
    )
    .option('--fault-status <code>', 'HTTP status of the fault (http: default 503)')
    .option('--fault-body <text>', 'body of an http fault (default empty)')
    .option('--retry-after <s>', 'Retry-After header of an http fault')
    .option('--rpc-code <code>', 'JSON-RPC error code of an rpc_error fault (default -32005)')
    .option('--rpc-data <json>', 'the error `data` of an rpc_error fault (any JSON value)')
    .option('--failure-rate <0..1>', 'fraction of requests that get the fault (default 1)')
    .option('--fail-first <n>', 'only the first n requests get the fault, then the node recovers')
    .option(
      '--method-error <method=preset[:arg]>',
      "every call of a method gets a real node's error (repeatable; see --list-method-errors)",
      collect,
    )
    .option('--list-method-errors', 'print the error presets --method-error takes, then exit')
    .option(
      '--evm-client <name>',
      'whose "already known" a resubmitted transaction gets: geth|nethermind|besu|erigon|reth|anvil',
    )
    .option('--idle-close <ms>', 'close keep-alive connections idle this long, without a hint')
    .option(
      '--shared-mempool',
      'one mempool for all nodes (a transaction sent to one is known to all)',
    )
    .option('--lag <n>', 'serve the chain n slots/blocks behind its head (a lagging replica)')
    .option('--ahead <n>', 'report a head n slots/blocks in the future (a node gone wrong)')
    .option('--other-chain', 'follow another chain: eth_chainId 5, devnet genesis hash')
    .option(
      '--nodes <name,...>',
      'apply the fault, method errors, lag and other chain to these nodes only',
    )
    .option('--quiet', 'no requests/s line every 5 s')
    .addHelpText(
      'after',
      examples(
        'cascade mock-nodes --delays 3,5,7,9,12,20',
        'cascade mock-nodes --host 0.0.0.0 --quiet',
        'cascade mock-nodes --fault http --fault-status 429 --retry-after 7 --nodes Helius-1',
        'cascade mock-nodes --method-error eth_call=geth.revert --method-error getSlot=solana.node_behind:120',
        'cascade mock-nodes --config my.toml --rtt 40 --tls --idle-close 2000 --quiet',
      ),
    )
    .action(
      lazy<[MockNodesOptions]>(
        async () => (await import('../commands/mock-nodes.js')).runMockNodes,
      ),
    );
}
