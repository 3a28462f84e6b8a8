/** `cascade node cordon|uncordon NAME`: take a node out of rotation on the running server, or back. */
import { setCordon } from '../core/index.js';
import { resolveAdminTarget, type AdminTargetOptions } from './admin-target.js';
import type { CommandIo, ExitCode } from './io.js';
import { renderJson } from './output.js';

/** Flags of `cascade node cordon|uncordon`. */
export interface NodeOptions extends AdminTargetOptions {
  readonly json?: boolean | undefined;
}

/** Cordons (`on`) or uncordons node `name` through the admin listener. */
export async function runNodeCordon(
  name: string,
  on: boolean,
  options: NodeOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const target = resolveAdminTarget(options, io);
  const result = await setCordon(target, name, on);
  if (options.json) io.out(renderJson(result));
  else if (on)
    io.out(
      `${name} cordoned: no new requests go to it (in-flight ones finish) and its subscriptions move to other nodes, until \`cascade node uncordon ${name}\` or a restart`,
    );
  else io.out(`${name} uncordoned: back in rotation`);
  return 0;
}
