import type { Server } from 'node:http';
import { StartupError } from '../errors.js';

/** `host:port` as a URL names it: an IPv6 address in brackets (once, if it came with them). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** Binds `server` to host:port, turning bind failures into one clear StartupError. */
export function listen(server: Server, host: string, port: number, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        reject(
          new StartupError(
            `${what}: ${where} is already in use`,
            'stop the process holding the port, or choose another with --port / server.port',
            { cause: err },
          ),
        );
      } else if (err.code === 'EACCES') {
        reject(
          new StartupError(
            `${what}: no permission to bind ${where}`,
            'use a port above 1023, or run with the needed privilege',
            { cause: err },
          ),
        );
      } else if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
        reject(
          new StartupError(
            `${what}: ${host} is not an address of this machine`,
            "set server.host to 127.0.0.1, 0.0.0.0 or one of this machine's addresses",
            { cause: err },
          ),
        );
      } else {
        reject(
          new StartupError(`${what}: cannot listen on ${where}: ${err.message}`, undefined, {
            cause: err,
          }),
        );
      }
    };
    const onListening = (): void => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
