/**
 * `cascade price … | head`, `cascade status | grep -m1 …`: a reader that stops early closes the
 * pipe, and the next write fails with EPIPE. Node turns that into an unhandled 'error' event and
 * a stack trace; a command line tool stops quietly instead, as `git log | head` does. Only the
 * one-shot commands: `serve` and `mock-nodes` keep Node's default, so a server never exits 0
 * on its own because a log reader went away.
 */

/** Commands that run until stopped (a closed stdout must not end them quietly). */
const LONG_RUNNING = new Set(['serve', 'mock-nodes']);

/** Ends the process quietly (exit 0) when stdout or stderr is a pipe the reader closed. */
export function stopQuietlyOnClosedPipe(argv: readonly string[]): void {
  // `cascade serve --help | head` only prints: it stops quietly like any one-shot command.
  const help = argv.includes('--help') || argv.includes('-h');
  if (LONG_RUNNING.has(argv[2] ?? '') && !help) return;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(0);
    });
  }
}
