/**
 * Where `cascade status` and `cascade node` find the running server's admin listener: --admin
 * URL, else the port the server recorded in its quotas lock, else the config's admin_port —
 * with the token from the variable the config names (CASCADE_ADMIN_TOKEN by default).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  CascadeError,
  DEFAULT_ADMIN_TOKEN_ENV,
  adminUrl,
  loadDotEnv,
  readServerLock,
  resolveConfigPath,
  type AdminTarget,
  type Config,
} from '../core/index.js';
import type { CommandIo } from './io.js';
import { configSource, loadOrFail } from './load-or-fail.js';

/** Flags that say where the server is. */
export interface AdminTargetOptions {
  readonly config?: string | undefined;
  readonly admin?: string | undefined;
  readonly quotas?: string | undefined;
}

/** The config, when one was named or the default one exists (status works without one too). */
function configIfAny(options: AdminTargetOptions, io: CommandIo): Config | undefined {
  const source = configSource(options.config, io);
  const named = options.config !== undefined || Boolean(io.env.CONFIG_PATH);
  if (!named && !existsSync(resolveConfigPath(source))) return undefined;
  return loadOrFail({ ...source, keySecretsOptional: true }, io, 'nothing was asked');
}

/** Resolves the admin listener to talk to. */
export function resolveAdminTarget(options: AdminTargetOptions, io: CommandIo): AdminTarget {
  loadDotEnv(io.cwd, io.env);
  const config = options.admin === undefined ? configIfAny(options, io) : undefined;
  const token = config ? config.server.adminToken : io.env.CASCADE_ADMIN_TOKEN || undefined;
  if (options.admin !== undefined) {
    if (!/^https?:\/\/[^/]+/.test(options.admin))
      throw new CascadeError(
        'USAGE',
        `--admin ${options.admin} is not a URL`,
        'e.g. --admin http://127.0.0.1:3099',
      );
    return { url: options.admin.replace(/\/+$/, ''), token };
  }
  const quotasPath = path.resolve(
    io.cwd,
    options.quotas ?? config?.server.quotasPath ?? 'quotas.json',
  );
  const lock = readServerLock(quotasPath);
  const host = config?.server.adminHost ?? '127.0.0.1';
  if (lock?.local && lock.adminPort) return { url: adminUrl(host, lock.adminPort), token };
  const port = config?.server.adminPort;
  if (port !== undefined && port !== 0) return { url: adminUrl(host, port), token };
  throw new CascadeError(
    'UNREACHABLE',
    lock
      ? `the cascade server using ${quotasPath} (pid ${lock.pid}) has no admin listener here`
      : `no running cascade server found (no live lock next to ${quotasPath}${config ? ', no server.admin_port in the config' : ', no config'})`,
    `start it with [server] admin_port set (or \`cascade serve --admin-port 3099\`), or pass --admin URL; the token, if any, comes from ${DEFAULT_ADMIN_TOKEN_ENV} or the variable admin_token_env names`,
  );
}
