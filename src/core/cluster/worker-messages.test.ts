import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Config } from '../config/types.js';
import { PrimaryInbox, type PrimaryChannel, type PrimaryCommand } from './worker-messages.js';

/** A worker's channel whose messages the test delivers, several in one tick as one read can. */
function fakeChannel(): {
  channel: PrimaryChannel;
  deliver: (...messages: PrimaryCommand[]) => void;
} {
  const emitter = new EventEmitter();
  return {
    channel: emitter,
    deliver: (...messages) => {
      for (const message of messages) emitter.emit('message', message);
    },
  };
}

const config = (path: string) => ({ path }) as unknown as Config;
const state: PrimaryCommand = { t: 'state', totals: {}, shares: {}, penalties: [] };

describe('PrimaryInbox', () => {
  it('asks with hello and starts from the primary’s answer', async () => {
    const { channel, deliver } = fakeChannel();
    const inbox = new PrimaryInbox(channel);
    const sent: unknown[] = [];
    const started = inbox.start((message) => sent.push(message));
    expect(sent).toEqual([{ t: 'hello' }]);
    deliver({ t: 'start', config: config('checked') });
    expect(await started).toEqual({ path: 'checked' });
  });

  it('drops reloads sent before its answer (the answer holds them) and keeps later ones', async () => {
    const { channel, deliver } = fakeChannel();
    const inbox = new PrimaryInbox(channel);
    const started = inbox.start(() => undefined);
    deliver(
      { t: 'reload', config: config('older') },
      { t: 'start', config: config('current') },
      // In the same read as the answer, before the worker has a handler: must not be lost.
      state,
      { t: 'reload', config: config('newer') },
    );
    expect(await started).toEqual({ path: 'current' });
    const handled: PrimaryCommand[] = [];
    inbox.handle((message) => handled.push(message));
    deliver({ t: 'shutdown' });
    expect(handled.map((m) => (m.t === 'reload' ? m.config.path : m.t))).toEqual([
      'state',
      'newer',
      'shutdown',
    ]);
  });

  it('starts with nothing when the primary goes away first', async () => {
    const emitter = new EventEmitter();
    const inbox = new PrimaryInbox(emitter);
    const started = inbox.start(() => undefined);
    emitter.emit('disconnect');
    expect(await started).toBeUndefined();
  });
});
