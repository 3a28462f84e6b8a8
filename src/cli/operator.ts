/**
 * The operator commands that talk to a running server's admin listener: `cascade status` and
 * `cascade node cordon|uncordon`. Declarations only; the work is in commands/status.ts and
 * commands/node.ts, imported when the command runs.
 */
import { Option, type Command } from 'commander';
import type { NodeOptions } from '../commands/node.js';
import { examples, lazy } from './lazy-action.js';

const CONFIG_HELP =
  'balancer config (default: $CONFIG_PATH, else config/balancer_config/config.toml)';

/** Flags that say where the running server's admin listener is. */
const adminOptions = (command: Command): Command =>
  command
    .option('-c, --config <path>', CONFIG_HELP)
    .option(
      '--admin <url>',
      'the admin listener (default: from the quotas lock, else server.admin_port)',
    )
    .option(
      '--quotas <path>',
      'usage file whose lock names the running server (overrides server.quotas_path)',
    )
    .option('--json', 'machine-readable output');

/** Declares `status` and `node cordon|uncordon` on `program`. */
export function declareOperator(program: Command): void {
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
      '\nNeeds a running server with an admin listener ([server] admin_port, or serve --admin-port).\n' +
        examples(
          'cascade status',
          'cascade status --watch',
          'cascade status --json --admin http://127.0.0.1:3099',
        ),
    )
    .action(lazy(async () => (await import('../commands/status.js')).runStatus));

  const nodeCommand = program
    .command('node')
    .description('take a node out of rotation on the running server (cordon), or back (uncordon)');
  for (const verb of ['cordon', 'uncordon'] as const) {
    adminOptions(
      nodeCommand
        .command(verb)
        .description(
          verb === 'cordon'
            ? 'no new requests go to NAME (in-flight ones finish) and its WebSocket subscriptions move to other nodes; kept across reloads, cleared by uncordon or a restart'
            : 'put NAME back in rotation',
        )
        .argument('<name>', 'node name'),
    ).action(
      lazy<[string, NodeOptions]>(async () => {
        const { runNodeCordon } = await import('../commands/node.js');
        return (name, options, io) => runNodeCordon(name, verb === 'cordon', options, io);
      }),
    );
  }
}
