import type { IncomingMessage } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from 'pino';
import { REQUEST_OUTCOMES } from '../metrics.js';
import { clientAddress } from './client-address.js';

/** What the access log needs from the server. */
export interface AccessLogContext {
  readonly logger: Logger;
  /** Peers whose X-Forwarded-For names the client; undefined = none. */
  readonly trustedProxies: BlockList | undefined;
}

/**
 * One access-log line (only with --access-log): who asked (the client's address, through
 * trusted proxies), what, where it went, what it cost, how it ended and how long it took.
 */
export function logAccess(
  ctx: AccessLogContext,
  req: IncomingMessage,
  fields: Record<string, unknown>,
  outcome: number,
  seconds: number,
): void {
  ctx.logger.info(
    {
      client: clientAddress(req, ctx.trustedProxies),
      ...fields,
      outcome: REQUEST_OUTCOMES[outcome],
      ms: Math.round(seconds * 1e4) / 10,
    },
    'request',
  );
}
