/**
 * The `cascade bench` family: TLS amortization (compare | direct | proxy), load and overhead.
 * Declarations only; the work is in commands/bench*.ts, imported when a bench runs.
 */
import { Option, type Command } from 'commander';
import type { BenchTlsOptions } from '../commands/bench.js';
import type { CommandIo } from '../commands/io.js';
import { examples, lazy } from './lazy-action.js';

/** The TLS modes: which paths the naive client measures. */
const BENCH_TLS_MODES = [
  ['compare', 'a naive client (new TLS connection per request) direct vs through cascade'],
  ['direct', 'the naive client straight to the provider only'],
  ['proxy', 'the naive client through cascade only'],
] as const;

/** Declares `bench` and its subcommands on `program`. */
export function declareBench(program: Command): void {
  const bench = program
    .command('bench')
    .description(
      'benchmarks writing results/: TLS amortization (compare | direct | proxy), load, overhead',
    );

  for (const [mode, description] of BENCH_TLS_MODES) {
    bench
      .command(mode, { isDefault: mode === 'compare' })
      .description(description)
      .addOption(
        new Option('--rpc-url <url>', 'provider both paths hit (default: a local TLS mock)').env(
          'RPC_URL',
        ),
      )
      .addOption(new Option('--requests <n>', 'requests per path (default 200)').env('REQUESTS'))
      .addOption(
        new Option('--concurrency <n>', 'concurrent connections (default 8)').env('CONCURRENCY'),
      )
      .addOption(new Option('--qps <n>', 'cap requests/s (default: unthrottled)').env('QPS'))
      .addOption(new Option('--body <json>', 'JSON-RPC body (default: getHealth)').env('BODY'))
      .option('--proxy-url <url>', 'measure this running proxy instead of starting one')
      .option('--rtt <ms>', 'simulated round trip of the local TLS mock (default 50)')
      .option('--warmup <n>', 'unmeasured requests before each path (default: 2 × concurrency)')
      .option('--timeout <ms>', 'per-request deadline (default 10000)')
      .option('--out <dir>', 'results directory (default results)')
      .option('--json', 'print the JSON report instead of the table')
      .addHelpText(
        'after',
        examples(
          'cascade bench',
          'cascade bench --rtt 80 --requests 400 --concurrency 16',
          'RPC_URL="https://mainnet.helius-rpc.com/?api-key=KEY" QPS=2 REQUESTS=24 CONCURRENCY=3 cascade bench',
        ),
      )
      .action(
        lazy(async () => {
          const { runBenchTls } = await import('../commands/bench.js');
          return (options: BenchTlsOptions, io: CommandIo) => runBenchTls(mode, options, io);
        }),
      );
  }

  bench
    .command('load')
    .description(
      "CascadeRPC's Run 1 / Run 2: six mock nodes, cascade, autocannon; spillover by tier",
    )
    .option('--scenario <name>', 'run1 (no node latency) or run2 (3, 5, 7 ms) (default run1)')
    .option('--duration <s>', 'seconds of measured load (default 10)')
    .option('--warmup <s>', 'seconds of unmeasured load (calibration in auto) (default 2)')
    .option('--connections <n>', 'keep-alive connections (default 100)')
    .option(
      '--limits-scale <f>',
      'factor on the rps_limit values, or auto: fit them to the warm-up (default auto)',
    )
    .option('--proxy-url <url>', 'load this running proxy (reads its /metrics) instead')
    .option(
      '-c, --config <path>',
      'nodes, tiers and rps_limit values to mock (default: config/balancer_config/mock_nodes.toml)',
    )
    .option('--body <json>', 'JSON-RPC body (default: getHealth)')
    .option('--out <dir>', 'results directory (default results)')
    .option('--json', 'print the JSON report instead of the tables')
    .addHelpText(
      'after',
      examples(
        'cascade bench load --scenario run1',
        'cascade bench load --scenario run2 --duration 30 --connections 200',
      ),
    )
    .action(lazy(async () => (await import('../commands/bench-load.js')).runBenchLoad));

  bench
    .command('overhead')
    .description('warm vs warm: the same fixed-rate load to a mock node directly and via cascade')
    .option('--rate <n>', 'requests/s across all connections (default 2000)')
    .option('--duration <s>', 'seconds of measured load per path (default 10)')
    .option('--warmup <s>', 'seconds of unmeasured load per path first (default 2)')
    .option('--connections <n>', 'keep-alive connections (default 10)')
    .option('--delay <ms>', 'latency of the mock node (default 0)')
    .option('--body <json>', 'JSON-RPC body (default: getHealth)')
    .option('--out <dir>', 'results directory (default results)')
    .option('--json', 'print the JSON report instead of the table')
    .addHelpText('after', examples('cascade bench overhead --rate 2000 --duration 10'))
    .action(lazy(async () => (await import('../commands/bench-overhead.js')).runBenchOverhead));
}
