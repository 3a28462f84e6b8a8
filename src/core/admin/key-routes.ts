/**
 * The admin routes of client keys (issue 27), on the admin listener: the keys in force with
 * their usage, budget and next reset, and the runtime changes an operator makes without a
 * restart — revoke and un-revoke (refused at once, on every door), a new budget or the
 * config's again, a usage reset. With `--workers` the primary answers them and every worker
 * applies a change before the answer. A reload keeps them (a revoke names the key's secret, a
 * budget the config's monthly_credits it replaced: see keys/key-overrides.ts). With replicas on
 * Redis a change is written there before the answer and every other replica applies it at its
 * next sync. Every change is also on disk before the answer (keys/key-changes-file.ts, beside
 * quotas.json), so a restart keeps it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ClientKeys } from '../keys/client-keys.js';
import type { KeyActivity, KeyCalls } from '../keys/key-activity.js';
import type { KeyState } from '../keys/key-state.js';
import { CascadeError, resetFailure } from '../errors.js';
import { sendJson, sendStatus } from '../http/respond.js';

/** One key as the admin API and `cascade key list` / `quota show` report it. */
export interface KeyRow {
  readonly name: string;
  readonly used: number;
  /** Credits per period; null = no budget. */
  readonly budget: number | null;
  readonly reset_day: number;
  readonly period_start: string;
  readonly next_reset: string;
  readonly revoked: boolean;
  readonly in_flight: number;
  /** Calls by outcome (`allowed`, or a refusal reason) since the start. */
  readonly requests: Readonly<Record<string, number>>;
}

/** A key's row now; `calls` replaces this process's calls with the fleet's (the workers'). */
export function keyRow(state: KeyState, calls?: KeyCalls): KeyRow {
  const { used, periodStart } = state.usage();
  return {
    name: state.name,
    used: Math.max(0, used - state.reservedNow),
    budget: state.budget ?? null,
    reset_day: state.config.resetDay,
    period_start: periodStart,
    next_reset: state.nextResetDay(),
    revoked: state.revoked,
    in_flight: calls?.inFlight ?? state.inFlight,
    requests: calls?.requests ?? Object.fromEntries(state.counts),
  };
}

/**
 * What the key routes act on: the keys of this process — or, for the primary of `--workers`,
 * the primary's copy of them (their usage is the primary's ledger) and the workers that serve
 * them, which must hear every change and report their calls.
 */
export interface KeyAdmin {
  readonly keys: ClientKeys;
  /** The calls the workers served, summed; absent: this process's own. */
  activity?(): Promise<KeyActivity>;
  /** Hands the keys' runtime changes to every worker; resolves once each applied them. */
  spread?(): Promise<void>;
  /** With replicas on Redis: where the changes go so that every replica applies them. */
  readonly fleet?: FleetKeyLink | undefined;
  /** Writes the keys' runtime changes to disk (they hold across restarts); absent: not kept. */
  readonly persist?: () => Promise<void>;
}

/** How a replica hands its keys' runtime changes to the fleet (cluster/key-override-sync.ts). */
export interface FleetKeyLink {
  /** Resolves once a sync wrote the changes made so far to Redis; false: Redis unreachable. */
  publish(): Promise<boolean>;
  /** Every other replica applies what Redis holds within this long (its sync interval). */
  readonly withinMs: number;
}

/** What a change answers besides the key's row, with replicas. */
export interface FleetWrite {
  /** True: in Redis; false: Redis unreachable, sent at a later sync. */
  readonly written: boolean;
  readonly within_ms: number;
}

const ACTION = /^\/admin\/keys\/([^/]+)\/(revoke|unrevoke|reset|budget\/(\d{1,16}|config))$/;

/**
 * Handles GET /admin/keys and POST /admin/keys/NAME/{revoke,unrevoke,reset,budget/CREDITS,
 * budget/config}; false for other paths. `saved` writes quotas.json after a change of usage.
 */
export function handleKeyRoute(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  admin: KeyAdmin,
  saved: () => Promise<void>,
  /** Each change made is logged (an audit trail: who was revoked, what budget, when). */
  logger: Logger,
): boolean {
  const keys = admin.keys;
  if (path === '/admin/keys') {
    if (req.method !== 'GET') sendStatus(res, 405, 'Method Not Allowed', 'GET');
    else
      void rows(admin).then(
        (list) => sendJson(res, 200, { keys: list }),
        (err: unknown) => sendJson(res, 500, { error: (err as Error).message }),
      );
    return true;
  }
  const match = ACTION.exec(path);
  if (match === null) return false;
  if (req.method !== 'POST') {
    sendStatus(res, 405, 'Method Not Allowed', 'POST');
    return true;
  }
  const name = decodeURIComponent(match[1]!);
  const state = keys.byName(name);
  if (state === undefined) {
    const known = keys.list().map((key) => key.name);
    sendJson(res, 404, { error: `no key '${name}' (keys: ${known.join(', ') || 'none'})` });
    return true;
  }
  const action = match[2]!;
  const credits = match[3] === undefined || match[3] === 'config' ? undefined : Number(match[3]);
  if (credits !== undefined && !Number.isSafeInteger(credits)) {
    sendJson(res, 400, {
      error: `budget ${match[3]} is over ${Number.MAX_SAFE_INTEGER}, the most credits cascade counts exactly`,
    });
    return true;
  }
  let fleet: Promise<FleetWrite | undefined> = Promise.resolve(undefined);
  let applied: Promise<void>;
  // Why the change could not be written to disk (it is in force all the same), if it could not.
  let notSaved: Promise<string | undefined> = Promise.resolve(undefined);
  // A reset changes usage: quotas.json is written before the answer. The other changes are
  // the changes file's alone (a quotas.json that cannot be written does not concern them).
  if (action === 'reset') applied = keys.resetUsage(state).then(saved);
  else {
    if (action === 'revoke' || action === 'unrevoke') keys.setRevoked(state, action === 'revoke');
    else keys.setBudget(state, credits);
    applied = Promise.resolve(admin.spread?.()).then(() => undefined);
    // On disk before the answer: a revoke that a restart would undo is not one.
    if (admin.persist !== undefined)
      notSaved = admin.persist().then(
        () => undefined,
        (err: unknown) => {
          const hint = err instanceof CascadeError && err.hint ? ` (${err.hint})` : '';
          return `${(err as Error).message}${hint}`;
        },
      );
    const link = admin.fleet;
    if (link !== undefined)
      fleet = link.publish().then((written) => ({ written, within_ms: link.withinMs }));
  }
  Promise.all([applied, fleet, notSaved])
    .then(async ([, write, unsaved]) => ({ list: await rows(admin), write, unsaved }))
    .then(
      ({ list, write, unsaved }) => {
        const fields = {
          key: name,
          change: action,
          ...(write === undefined ? {} : { fleet: write.written }),
          ...(unsaved === undefined ? {} : { saved: false, err: unsaved }),
        };
        if (unsaved === undefined)
          logger.info(fields, 'client key changed through the admin listener');
        else
          logger.error(
            fields,
            'client key changed through the admin listener, but not saved: a restart before it is saved undoes it',
          );
        sendJson(res, 200, {
          key: list.find((row) => row.name === name) ?? keyRow(state),
          ...(write === undefined ? {} : { fleet: write }),
          ...(unsaved === undefined ? {} : { not_saved: unsaved }),
        });
      },
      (err: unknown) => {
        if (action === 'reset') {
          const { status, error } = resetFailure(err);
          return sendJson(res, status, { error });
        }
        sendJson(res, 500, { error: `applied but not saved: ${(err as Error).message}` });
      },
    );
  return true;
}

/** Every key's row, with the workers' calls when there are workers. */
async function rows(admin: KeyAdmin): Promise<KeyRow[]> {
  const activity = admin.activity === undefined ? undefined : await admin.activity();
  return admin.keys.list().map((state) => keyRow(state, activity?.[state.name]));
}
