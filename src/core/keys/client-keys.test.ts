import { describe, expect, it } from 'vitest';
import { clientKey, keysOf } from '../../../test/support/client-keys.js';
import { ManualClock } from '../clock.js';
import { ClientKeys, isRefusal } from './client-keys.js';
import { KeyState } from './key-state.js';

const ALICE = 'ck_alice_0123456789abcdefghijklmnop';
const ALICE_NEW = 'ck_alice_rotated_0123456789abcdefgh';
const BOB = 'ck_bob_0123456789abcdefghijklmnopqrs';

function reasonOf(who: ReturnType<ClientKeys['identify']>): string {
  if (who === undefined) return 'keyless';
  return isRefusal(who) ? who.reason : `key:${who.name}`;
}

describe('ClientKeys.identify on a connection', () => {
  it('remembers the key a connection passed with, per connection', () => {
    const keys = new ClientKeys(
      keysOf(clientKey('alice', ALICE), clientKey('bob', BOB)),
      true,
      new ManualClock(),
    );
    const socket = {};
    const other = {};
    expect(reasonOf(keys.identify(ALICE, 'ip', socket))).toBe('key:alice');
    expect(reasonOf(keys.identify(ALICE, 'ip', socket))).toBe('key:alice');
    // Another key on the same connection is looked up, not taken for the remembered one.
    expect(reasonOf(keys.identify(BOB, 'ip', socket))).toBe('key:bob');
    expect(reasonOf(keys.identify(`${ALICE.slice(0, -1)}q`, 'ip', socket))).toBe('unknown_key');
    expect(reasonOf(keys.identify(BOB, 'ip', other))).toBe('key:bob');
    expect(reasonOf(keys.identify(undefined, 'ip', socket))).toBe('no_key');
  });

  it('takes the path hit a connection passed with as that key again, until the keys change', () => {
    const keys = new ClientKeys(
      keysOf(clientKey('alice', ALICE), clientKey('bob', BOB)),
      true,
      new ManualClock(),
    );
    const socket = {};
    const aliceHit = { key: ALICE };
    const alice = keys.identify(ALICE, 'ip', socket, aliceHit);
    expect(reasonOf(alice)).toBe('key:alice');
    expect(keys.identify(ALICE, 'ip', socket, aliceHit)).toBe(alice);
    // Another path's hit is compared as any key is: the same text passes, another does not.
    expect(keys.identify(ALICE, 'ip', socket, { key: ALICE })).toBe(alice);
    expect(reasonOf(keys.identify(BOB, 'ip', socket, { key: BOB }))).toBe('key:bob');
    expect(reasonOf(keys.identify(`${ALICE.slice(0, -1)}q`, 'ip', socket, {}))).toBe('unknown_key');
    const bobHit = { key: BOB };
    const bob = keys.identify(BOB, 'ip', socket, bobHit);
    keys.setRevoked(bob as KeyState, true);
    expect(reasonOf(keys.identify(BOB, 'ip', socket, bobHit))).toBe('revoked');
  });

  it('refuses a rotated-out secret and a revoked key on a connection that passed with them', () => {
    const keys = new ClientKeys(keysOf(clientKey('alice', ALICE)), true, new ManualClock());
    const socket = {};
    const alice = keys.identify(ALICE, 'ip', socket);
    expect(alice).toBeInstanceOf(KeyState);
    // Same name, new secret: the state is kept (usage, buckets), the old secret is not.
    keys.reconfigure(keysOf(clientKey('alice', ALICE_NEW)));
    expect(reasonOf(keys.identify(ALICE, 'ip', socket))).toBe('unknown_key');
    expect(keys.identify(ALICE_NEW, 'ip', socket)).toBe(alice);
    keys.setRevoked(alice as KeyState, true);
    expect(reasonOf(keys.identify(ALICE_NEW, 'ip', socket))).toBe('revoked');
    keys.setRevoked(alice as KeyState, false);
    expect(keys.identify(ALICE_NEW, 'ip', socket)).toBe(alice);
    keys.reconfigure(keysOf());
    expect(reasonOf(keys.identify(ALICE_NEW, 'ip', socket))).toBe('unknown_key');
  });

  it('still answers an address out of failed checks before looking at its key', () => {
    const keys = new ClientKeys(keysOf(clientKey('alice', ALICE)), true, new ManualClock());
    const socket = {};
    expect(reasonOf(keys.identify(ALICE, '10.0.0.9', socket))).toBe('key:alice');
    for (let i = 0; i < 25; i++)
      keys.identify(`ck_guess_${String(i).padStart(26, '0')}`, '10.0.0.9');
    expect(reasonOf(keys.identify(ALICE, '10.0.0.9', socket))).toBe('failed_checks');
  });
});

describe('ClientKeys failed checks split between workers', () => {
  const guesses = (keys: ClientKeys, ip: string, count: number): string[] =>
    Array.from({ length: count }, (_, i) =>
      reasonOf(keys.identify(`ck_guess_${String(i).padStart(26, '0')}`, ip)),
    );

  it('allows each of two workers half the burst and half the rate', () => {
    const clock = new ManualClock();
    const one = new ClientKeys(keysOf(clientKey('alice', ALICE)), true, clock);
    const half = new ClientKeys(keysOf(clientKey('alice', ALICE)), true, clock);
    half.splitFailedChecks(2);
    const unknown = (reasons: string[]) => reasons.filter((r) => r === 'unknown_key').length;
    expect(unknown(guesses(one, '10.0.0.1', 30))).toBe(20);
    expect(unknown(guesses(half, '10.0.0.1', 30))).toBe(10);
    // One second later: 2 more checks for one process, 1 for each worker (2 for the fleet).
    clock.advance(1000);
    expect(unknown(guesses(one, '10.0.0.1', 5))).toBe(2);
    expect(unknown(guesses(half, '10.0.0.1', 5))).toBe(1);
  });
});

describe('ClientKeys.onChange and recheck', () => {
  it('tells listeners of every change of the keys in force, the fleet’s revokes included', () => {
    const keys = new ClientKeys(
      keysOf(clientKey('alice', ALICE), clientKey('bob', BOB)),
      true,
      new ManualClock(),
    );
    let changes = 0;
    const off = keys.onChange(() => changes++);
    keys.reconfigure(keysOf(clientKey('alice', ALICE_NEW), clientKey('bob', BOB)));
    expect(changes).toBe(1);
    expect(reasonOf(keys.recheck(ALICE))).toBe('unknown_key');
    expect(reasonOf(keys.recheck(ALICE_NEW))).toBe('key:alice');
    const bob = keys.byName('bob')!;
    keys.setRevoked(bob, true);
    keys.setRevoked(bob, true);
    expect(changes).toBe(2);
    expect(reasonOf(keys.recheck(BOB))).toBe('revoked');
    // A worker told by its primary: the book replaced, bob no longer revoked.
    const other = new ClientKeys(keysOf(clientKey('bob', BOB)), true, new ManualClock());
    keys.applyOverrides(other.overrides());
    expect(changes).toBe(3);
    expect(reasonOf(keys.recheck(BOB))).toBe('key:bob');
    keys.setBudget(bob, 10);
    expect(changes).toBe(3);
    off();
    keys.reconfigure(keysOf());
    expect(changes).toBe(3);
  });
});
