#!/usr/bin/env node
/**
 * The `cascade` executable: declares every subcommand (flags, help, examples; the `bench`
 * family in cli/bench.ts, `status` and `node` in cli/operator.ts) and imports its module only
 * when it runs, so `cascade --help` and light commands start fast. The modules in commands/ do
 * the work.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { packageVersion } from './commands/version.js';
import { declareBench } from './cli/bench.js';
import { stopQuietlyOnClosedPipe } from './cli/closed-pipe.js';
import { declareMockNodes } from './cli/mock-nodes.js';
import { declareOperator } from './cli/operator.js';
import { examples, lazy } from './cli/lazy-action.js';

/** Parses a --port value, rejecting anything but a whole number 0–65535. */
function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new InvalidArgumentError(`'${value}' is not a port; use a whole number from 0 to 65535.`);
  }
  return port;
}

/** Parses --blocks: a whole number of blocks, at least 1. */
function parseBlocks(value: string): number {
  const blocks = Number(value);
  if (!/^\d+$/.test(value) || blocks < 1 || !Number.isSafeInteger(blocks)) {
    throw new InvalidArgumentError(
      `'${value}' is not a number of blocks; use a whole number, e.g. 50000.`,
    );
  }
  return blocks;
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

const CONFIG_HELP =
  'balancer config (default: $CONFIG_PATH, else config/balancer_config/config.toml)';
const QUOTAS_HELP = 'usage file (overrides server.quotas_path)';
const MOCK_TOML = 'config/balancer_config/mock_nodes.toml';

const program = new Command()
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

program
  .command('validate-config')
  .description('load the config and every price list; print each problem or the node table')
  .option('-c, --config <path>', CONFIG_HELP)
  .option('--json', 'machine-readable output')
  .option('--online', 'also ask each node its chain (expect_chain) and head: one priced call each')
  .addHelpText('after', examples(`cascade validate-config --config ${MOCK_TOML}`))
  .action(lazy(async () => (await import('./commands/validate-config.js')).runValidateConfig));

program
  .command('price')
  .description('show what methods cost on each node, and which node a request goes to first')
  .argument('<method...>', 'JSON-RPC method names, e.g. getBalance eth_call')
  .option('-c, --config <path>', CONFIG_HELP)
  .option('--json', 'machine-readable output')
  .option('--chain <name>', "only that chain's nodes, e.g. --chain base eth_getLogs")
  .option(
    '--blocks <n>',
    'eth_getLogs: how a range of n blocks is cut for each node, and what it costs',
    parseBlocks,
  )
  .addHelpText(
    'after',
    examples(
      `cascade price getBalance getProgramAccounts --config ${MOCK_TOML}`,
      'cascade price eth_getLogs --blocks 50000 --config config/balancer_config/evm.example.toml',
    ),
  )
  .action(lazy(async () => (await import('./commands/price.js')).runPrice));

program
  .command('serve')
  .description('run the proxy (POST / and /send-request, GET /health, GET /metrics)')
  .option('-c, --config <path>', CONFIG_HELP)
  .option('--host <host>', 'listen address (overrides server.host)')
  .option('--port <port>', 'listen port (overrides server.port)', parsePort)
  .option(
    '--demo',
    'start mock nodes in-process and serve two chains from them: Solana at / and /solana, EVM at /eth (no keys needed)',
  )
  .option('--access-log', 'log one line per request (method, node, attempts, outcome, ms, credits)')
  .option('--quotas <path>', QUOTAS_HELP)
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
    examples(
      'cascade serve --demo',
      'cascade serve --demo --admin-port 3099   (then: cascade status, or http://127.0.0.1:3099/status)',
      'cascade serve --workers auto',
      'cascade serve --config config/balancer_config/config.toml --port 8080',
    ) + '\n\nSignals: SIGHUP reloads nodes and price lists; SIGINT/SIGTERM drain and exit.',
  )
  .action(lazy(async () => (await import('./commands/serve.js')).runServe));

declareMockNodes(program);

const quota = program
  .command('quota')
  .description(
    'show or reset per-node credit usage (live from a running server when it has an admin_port)',
  );

quota
  .command('show')
  .description(
    'usage, threshold, limit, period and days to the next reset for every node and provider account',
  )
  .option('-c, --config <path>', CONFIG_HELP)
  .option('--quotas <path>', QUOTAS_HELP)
  .option('--json', 'machine-readable output')
  .addHelpText('after', examples('cascade quota show --config config/balancer_config/config.toml'))
  .action(lazy(async () => (await import('./commands/quota.js')).runQuotaShow));

quota
  .command('reset')
  .description(
    'zero the usage of some nodes (or --all --yes); goes through the running server if any',
  )
  .argument('[node...]', 'node names')
  .option('-c, --config <path>', CONFIG_HELP)
  .option('--quotas <path>', QUOTAS_HELP)
  .option('--all', 'every node and account (also rewrites a corrupt quotas file)')
  .option('--yes', 'confirm --all')
  .option('--account <name...>', "zero provider accounts' pools ([[accounts]] names)")
  .option('--key <name...>', "zero client keys' usage instead of nodes'")
  .option('--json', 'machine-readable output')
  .addHelpText(
    'after',
    examples(
      'cascade quota reset Helius',
      'cascade quota reset --all --yes',
      'cascade quota reset --account alchemy',
      'cascade quota reset --key web-app',
    ),
  )
  .action(lazy(async () => (await import('./commands/quota.js')).runQuotaReset));

const key = program.command('key').description('client keys: who may call cascade ([[keys]])');

key
  .command('new')
  .description('print a fresh random client key once, and the [[keys]] lines to paste')
  .argument('<name>', 'the key name (logs, metrics and usage show it; never the key)')
  .option('--json', 'machine-readable output')
  .addHelpText('after', examples('cascade key new web-app'))
  .action(lazy(async () => (await import('./commands/key.js')).runKeyNew));

/** Flags that say where the running server's admin listener is (the key commands). */
const keyAdmin = (command: Command): Command =>
  command
    .option('-c, --config <path>', CONFIG_HELP)
    .option(
      '--admin <url>',
      'the admin listener (default: from the quotas lock, else server.admin_port)',
    )
    .option('--quotas <path>', QUOTAS_HELP)
    .option('--json', 'machine-readable output');

keyAdmin(key.command('list').description("the running server's keys: usage, budget, reset, state"))
  .addHelpText('after', examples('cascade key list'))
  .action(lazy(async () => (await import('./commands/key-admin.js')).runKeyList));

keyAdmin(
  key
    .command('revoke')
    .description(
      'refuse a key at once on the running server — with replicas on Redis, on every replica — until un-revoked or its secret changes',
    )
    .argument('<name>', 'key name'),
)
  .addHelpText('after', examples('cascade key revoke web-app'))
  .action(lazy(async () => (await import('./commands/key-admin.js')).runKeyRevoke));

keyAdmin(
  key
    .command('unrevoke')
    .description('take a revoke back (with replicas on Redis, on every replica)')
    .argument('<name>', 'key name'),
)
  .addHelpText('after', examples('cascade key unrevoke web-app'))
  .action(lazy(async () => (await import('./commands/key-admin.js')).runKeyUnrevoke));

keyAdmin(
  key
    .command('budget')
    .description(
      "set a key's monthly credits on the running server, across restarts (with replicas on Redis: on every replica)",
    )
    .argument('<name>', 'key name')
    .argument('<credits>', 'credits per billing period, or `config` for its monthly_credits again'),
)
  .addHelpText(
    'after',
    examples('cascade key budget web-app 500000', 'cascade key budget web-app config'),
  )
  .action(lazy(async () => (await import('./commands/key-admin.js')).runKeyBudget));

declareOperator(program);

declareBench(program);

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

stopQuietlyOnClosedPipe(process.argv);

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
