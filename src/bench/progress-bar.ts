/** A one-line progress bar redrawn in place on a terminal (stderr), at most ten times a second. */

const WIDTH = 30;
const REDRAW_MS = 100;

/** Where the bar draws; only a TTY gets one. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): boolean;
}

/** Progress of one phase: `update(done)` as it goes, `finish()` at the end. */
export interface Progress {
  update(done: number): void;
  finish(): void;
}

const SILENT: Progress = { update: () => {}, finish: () => {} };

/** A bar for `total` units labelled `label`, or a silent one when `stream` is not a TTY. */
export function progressBar(
  stream: ProgressStream | undefined,
  label: string,
  total: number,
  unit = '',
): Progress {
  if (!stream?.isTTY || total <= 0) return SILENT;
  let last = 0;
  let current = 0;
  const draw = () => {
    const share = Math.min(1, current / total);
    const filled = Math.round(share * WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
    const count = `${Math.floor(current).toLocaleString('en-US')}/${total.toLocaleString('en-US')}${unit}`;
    stream.write(
      `\r${label.padEnd(12)} ${bar} ${(share * 100).toFixed(0).padStart(3)}% ${count}\x1b[K`,
    );
  };
  return {
    update(done) {
      current = done;
      const now = Date.now();
      if (now - last < REDRAW_MS && done < total) return;
      last = now;
      draw();
    },
    finish() {
      draw();
      stream.write('\n');
    },
  };
}
