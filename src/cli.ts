#!/usr/bin/env node
/**
 * The `cascade` executable: declares every subcommand and imports its module only when it
 * runs, so `cascade --help` and light commands start fast.
 */
import { Command, CommanderError, Option } from 'commander';
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

program.addHelpText('after', '\nRun `cascade <command> --help` for the flags of one command.');

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    const clean = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
    process.exitCode = clean.includes(err.code) ? 0 : 2;
  } else {
    throw err;
  }
}
