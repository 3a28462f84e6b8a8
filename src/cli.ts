#!/usr/bin/env node
/**
 * The `cascade` executable: declares every subcommand and imports its module only when it
 * runs, so `cascade --help` and light commands start fast.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { packageVersion } from './commands/version.js';

const program = new Command();

program
  .name('cascade')
  .description(
    'JSON-RPC reverse proxy: fills premium RPC providers first and spills over tier by tier, ' +
      "inside every provider's rate limit, concurrency cap and monthly credit quota.",
  )
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError('(run `cascade --help` for the list of commands)')
  .showSuggestionAfterError()
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write(text) });

interface ServeFlags {
  config?: string;
  host?: string;
  port?: number;
  demo?: boolean;
  accessLog?: boolean;
  quotas?: string;
  workers?: number | 'auto';
  adminPort?: number;
}

/** Parses --workers: a whole number from 1 to 256, or "auto" (one per CPU). */
function parseWorkers(value: string): number | 'auto' {
  if (value === 'auto') return value;
  const count = Number(value);
  if (!/^\d+$/.test(value) || count < 1 || count > 256) {
    throw new InvalidArgumentError(
      `'${value}' is not a worker count; use 1–256, or "auto" for one per CPU.`,
    );
  }
  return count;
}

/** Parses a --port value, rejecting anything but a whole number 0–65535. */
function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new InvalidArgumentError(`'${value}' is not a port; use a whole number from 0 to 65535.`);
  }
  return port;
}

const configOption = () =>
  new Option(
    '-c, --config <path>',
    'balancer config (default: $CONFIG_PATH, else config/balancer_config/config.toml)',
  );

program
  .command('validate-config')
  .description('load the config and every price list; print each problem or the node table')
  .addOption(configOption())
  .option('--json', 'machine-readable output')
  .addHelpText(
    'after',
    '\nExample:\n  cascade validate-config --config config/balancer_config/mock_nodes.toml',
  )
  .action(async (options: { config?: string; json?: boolean }) => {
    const [{ runAction }, { runValidateConfig }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/validate-config.js'),
    ]);
    await runAction((io) => runValidateConfig(options, io));
  });

program
  .command('price')
  .description('show what methods cost on each node, and which node a request goes to first')
  .argument('<method...>', 'JSON-RPC method names, e.g. getBalance eth_call')
  .addOption(configOption())
  .option('--json', 'machine-readable output')
  .addHelpText(
    'after',
    '\nExample:\n  cascade price getBalance getProgramAccounts --config config/balancer_config/mock_nodes.toml',
  )
  .action(async (methods: string[], options: { config?: string; json?: boolean }) => {
    const [{ runAction }, { runPrice }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/price.js'),
    ]);
    await runAction((io) => runPrice(methods, options, io));
  });

program
  .command('serve')
  .description('run the proxy (POST / and /send-request, GET /health, GET /metrics)')
  .addOption(configOption())
  .option('--host <host>', 'listen address (overrides server.host)')
  .option('--port <port>', 'listen port (overrides server.port)', parsePort)
  .option('--demo', 'start six mock nodes in-process and serve in front of them (no keys needed)')
  .option('--access-log', 'log one line per request (method, node, attempts, outcome, ms, credits)')
  .option('--quotas <path>', 'usage file (overrides server.quotas_path)')
  .option(
    '--workers <n>',
    'worker processes sharing the port, or "auto" (overrides cluster.workers)',
    parseWorkers,
  )
  .option(
    '--admin-port <port>',
    'admin listener on 127.0.0.1 (overrides server.admin_port): /status, /admin/nodes',
    parsePort,
  )
  .addHelpText(
    'after',
    '\nExamples:\n  cascade serve --demo\n  cascade serve --demo --admin-port 3099   (then: cascade status, or http://127.0.0.1:3099/status)\n  cascade serve --workers auto\n  cascade serve --config config/balancer_config/config.toml --port 8080\n\nSignals: SIGHUP reloads nodes and price lists; SIGINT/SIGTERM drain and exit.',
  )
  .action(async (options: ServeFlags) => {
    const [{ runAction }, { runServe }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/serve.js'),
    ]);
    await runAction((io) => runServe(options, io));
  });

interface MockNodesFlags {
  config?: string;
  host?: string;
  delays?: string;
  jitter?: string;
  responseBytes?: string;
  tls?: boolean;
  rtt?: string;
  fault?: string;
  faultStatus?: string;
  faultBody?: string;
  retryAfter?: string;
  rpcCode?: string;
  rpcData?: string;
  failureRate?: string;
  failFirst?: string;
  methodError?: string[];
  listMethodErrors?: boolean;
  evmClient?: string;
  idleClose?: string;
  sharedMempool?: boolean;
  nodes?: string;
  quiet?: boolean;
}

/** Commander's collector for a repeatable flag. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

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
  .option('--nodes <name,...>', 'apply the fault and method errors to these nodes only')
  .option('--quiet', 'no requests/s line every 5 s')
  .addHelpText(
    'after',
    '\nExamples:\n  cascade mock-nodes --delays 3,5,7,9,12,20\n  cascade mock-nodes --host 0.0.0.0 --quiet\n  cascade mock-nodes --fault http --fault-status 429 --retry-after 7 --nodes Helius-1\n  cascade mock-nodes --method-error eth_call=geth.revert --method-error getSlot=solana.node_behind:120\n  cascade mock-nodes --config my.toml --rtt 40 --tls --idle-close 2000 --quiet',
  )
  .action(async (options: MockNodesFlags) => {
    const [{ runAction }, { runMockNodes }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/mock-nodes.js'),
    ]);
    await runAction((io) => runMockNodes(options, io));
  });

const quota = program
  .command('quota')
  .description(
    'show or reset per-node credit usage (live from a running server when it has an admin_port)',
  );

quota
  .command('show')
  .description('usage, threshold, limit, period and days to the next reset for every node')
  .addOption(configOption())
  .option('--quotas <path>', 'usage file (overrides server.quotas_path)')
  .option('--json', 'machine-readable output')
  .addHelpText(
    'after',
    '\nExample:\n  cascade quota show --config config/balancer_config/config.toml',
  )
  .action(async (options: { config?: string; quotas?: string; json?: boolean }) => {
    const [{ runAction }, { runQuotaShow }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/quota.js'),
    ]);
    await runAction((io) => runQuotaShow(options, io));
  });

quota
  .command('reset')
  .description(
    'zero the usage of some nodes (or --all --yes); goes through the running server if any',
  )
  .argument('[node...]', 'node names')
  .addOption(configOption())
  .option('--quotas <path>', 'usage file (overrides server.quotas_path)')
  .option('--all', 'every node (also rewrites a corrupt quotas file)')
  .option('--yes', 'confirm --all')
  .option('--json', 'machine-readable output')
  .addHelpText(
    'after',
    '\nExamples:\n  cascade quota reset Helius\n  cascade quota reset --all --yes',
  )
  .action(
    async (
      nodes: string[],
      options: { config?: string; quotas?: string; json?: boolean; all?: boolean; yes?: boolean },
    ) => {
      const [{ runAction }, { runQuotaReset }] = await Promise.all([
        import('./commands/run-action.js'),
        import('./commands/quota.js'),
      ]);
      await runAction((io) => runQuotaReset(nodes, options, io));
    },
  );

/** Flags that say where the running server's admin listener is. */
const adminOptions = (command: Command): Command =>
  command
    .addOption(configOption())
    .option(
      '--admin <url>',
      'the admin listener (default: from the quotas lock, else server.admin_port)',
    )
    .option(
      '--quotas <path>',
      'usage file whose lock names the running server (overrides server.quotas_path)',
    )
    .option('--json', 'machine-readable output');

adminOptions(
  program
    .command('status')
    .description(
      "where traffic goes now: every node's state, latency, load against its limits, credits",
    )
    .option('-w, --watch', 'refresh every second (Ctrl-C stops)'),
)
  .addOption(
    new Option('--iterations <n>', 'with --watch: stop after n tables')
      .argParser(Number)
      .hideHelp(),
  )
  .addHelpText(
    'after',
    '\nNeeds a running server with an admin listener ([server] admin_port, or serve --admin-port).\n\nExamples:\n  cascade status\n  cascade status --watch\n  cascade status --json --admin http://127.0.0.1:3099',
  )
  .action(async (options: StatusFlags) => {
    const [{ runAction }, { runStatus }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/status.js'),
    ]);
    await runAction((io) => runStatus(options, io));
  });

const nodeCommand = program
  .command('node')
  .description('take a node out of rotation on the running server (cordon), or back (uncordon)');
for (const verb of ['cordon', 'uncordon'] as const) {
  adminOptions(
    nodeCommand
      .command(verb)
      .description(
        verb === 'cordon'
          ? 'no new requests go to NAME (in-flight ones finish); kept across reloads, cleared by uncordon or a restart'
          : 'put NAME back in rotation',
      )
      .argument('<name>', 'node name'),
  ).action(async (name: string, options: StatusFlags) => {
    const [{ runAction }, { runNodeCordon }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/node.js'),
    ]);
    await runAction((io) => runNodeCordon(name, verb === 'cordon', options, io));
  });
}

interface StatusFlags {
  config?: string;
  admin?: string;
  quotas?: string;
  json?: boolean;
  watch?: boolean;
  iterations?: number;
}

interface BenchTlsFlags {
  rpcUrl?: string;
  proxyUrl?: string;
  requests?: string;
  concurrency?: string;
  qps?: string;
  body?: string;
  rtt?: string;
  warmup?: string;
  timeout?: string;
  out?: string;
  json?: boolean;
}

interface BenchLoadFlags {
  scenario?: string;
  duration?: string;
  warmup?: string;
  connections?: string;
  limitsScale?: string;
  proxyUrl?: string;
  config?: string;
  body?: string;
  out?: string;
  json?: boolean;
}

interface BenchOverheadFlags {
  rate?: string;
  duration?: string;
  warmup?: string;
  connections?: string;
  delay?: string;
  body?: string;
  out?: string;
  json?: boolean;
}

const bench = program
  .command('bench')
  .description(
    'benchmarks writing results/: TLS amortization (compare | direct | proxy), load, overhead',
  );

const BENCH_TLS_MODES = [
  ['compare', 'a naive client (new TLS connection per request) direct vs through cascade'],
  ['direct', 'the naive client straight to the provider only'],
  ['proxy', 'the naive client through cascade only'],
] as const;

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
      '\nExamples:\n  cascade bench\n  cascade bench --rtt 80 --requests 400 --concurrency 16\n  RPC_URL="https://mainnet.helius-rpc.com/?api-key=KEY" QPS=2 REQUESTS=24 CONCURRENCY=3 cascade bench',
    )
    .action(async (options: BenchTlsFlags) => {
      const [{ runAction }, { runBenchTls }] = await Promise.all([
        import('./commands/run-action.js'),
        import('./commands/bench.js'),
      ]);
      await runAction((io) => runBenchTls(mode, options, io));
    });
}

bench
  .command('load')
  .description("CascadeRPC's Run 1 / Run 2: six mock nodes, cascade, autocannon; spillover by tier")
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
    '\nExamples:\n  cascade bench load --scenario run1\n  cascade bench load --scenario run2 --duration 30 --connections 200',
  )
  .action(async (options: BenchLoadFlags) => {
    const [{ runAction }, { runBenchLoad }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/bench-load.js'),
    ]);
    await runAction((io) => runBenchLoad(options, io));
  });

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
  .addHelpText('after', '\nExample:\n  cascade bench overhead --rate 2000 --duration 10')
  .action(async (options: BenchOverheadFlags) => {
    const [{ runAction }, { runBenchOverhead }] = await Promise.all([
      import('./commands/run-action.js'),
      import('./commands/bench-overhead.js'),
    ]);
    await runAction((io) => runBenchOverhead(options, io));
  });

program.addHelpText('after', '\nRun `cascade <command> --help` for the flags of one command.');

/** Usage errors inside a command point at that command's own help. */
function pointAtOwnHelp(command: Command, path: string): void {
  for (const sub of command.commands) {
    const name = `${path} ${sub.name()}`;
    sub.showHelpAfterError(`(run \`${name} --help\` for usage and examples)`);
    pointAtOwnHelp(sub, name);
  }
}
pointAtOwnHelp(program, 'cascade');

try {
  if (process.argv.length <= 2) program.outputHelp();
  else await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    const clean = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
    process.exitCode = clean.includes(err.code) ? 0 : 2;
  } else {
    throw err;
  }
}
