/**
 * Keep-alive the way cloud load balancers do it (AWS ALB, GCP): a connection idle for the bound
 * is closed, and answers carry no `Keep-Alive: timeout=` hint, so a client cannot know when.
 *
 * Node's own keepAliveTimeout cannot do this: the server then adds `Keep-Alive: timeout=N` to
 * every answer (http.OutgoingMessage._storeHeader, whenever the response has a keep-alive
 * timeout and no Connection header of its own), and it closes the socket about a second after
 * the advertised time (measured on Node 20.20: a 300 ms timeout closed at ~1.3 s). So
 * keepAliveTimeout is set to 0 (no hint, no Node timer) and each connection gets its own
 * timer, armed while no request is in flight on it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';

interface Idle {
  busy: number;
  timer: NodeJS.Timeout | undefined;
}

/** Closes `server`'s connections after `idleMs` without a request in flight. */
export function closeIdleConnections(server: Server, idleMs: number): void {
  server.keepAliveTimeout = 0;
  const idle = new WeakMap<Duplex, Idle>();
  const arm = (socket: Duplex, state: Idle) => {
    clearTimeout(state.timer);
    // Closing the socket sends a FIN, as a balancer closing an idle connection does.
    state.timer = setTimeout(() => socket.destroy(), idleMs);
    state.timer.unref();
  };
  // Requests see the TLS socket on https, so that is the connection to time.
  const accepted = server instanceof tls.Server ? 'secureConnection' : 'connection';
  server.on(accepted, (socket: Duplex) => {
    const state: Idle = { busy: 0, timer: undefined };
    idle.set(socket, state);
    arm(socket, state);
    socket.once('close', () => clearTimeout(state.timer));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Duplex;
    const state = idle.get(socket);
    if (state === undefined) return;
    state.busy++;
    clearTimeout(state.timer);
    res.once('close', () => {
      if (--state.busy === 0 && !socket.destroyed) arm(socket, state);
    });
  });
}
