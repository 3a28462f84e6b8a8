/**
 * Questions the primary asks every live worker at once (their node rows, a cordon to apply),
 * answered over IPC. An ask resolves with the answers that came — a worker that is leaving or
 * restarting may never answer, so each ask gives up on the missing ones after a deadline.
 */

/** How long the primary waits for a worker's answer. */
export const WORKER_ASK_TIMEOUT_MS = 2000;
/**
 * How long a /metrics scrape waits for every serving worker's series: a missing worker fails
 * the scrape (a partial sum would read as a counter reset), so a busy machine gets time.
 */
export const METRICS_GATHER_TIMEOUT_MS = 5000;

interface Pending {
  readonly answers: unknown[];
  waiting: number;
  readonly done: (answers: unknown[]) => void;
  readonly timer: NodeJS.Timeout;
}

/** The primary's open questions to its workers. */
export class WorkerAsks {
  readonly #pending = new Map<number, Pending>();
  #next = 0;

  /**
   * Sends `question` (with a fresh id) to each of `workers` through `send`; resolves with the
   * answers in arrival order once all answered or `timeoutMs` passed.
   */
  ask<W, M>(
    workers: readonly W[],
    question: (id: number) => M,
    send: (worker: W, message: M) => void,
    timeoutMs = WORKER_ASK_TIMEOUT_MS,
  ): Promise<unknown[]> {
    if (workers.length === 0) return Promise.resolve([]);
    const id = this.#next++;
    return new Promise((resolve) => {
      const finish = (answers: unknown[]) => {
        this.#pending.delete(id);
        resolve(answers);
      };
      const answers: unknown[] = [];
      const timer = setTimeout(() => finish(answers), timeoutMs);
      timer.unref();
      this.#pending.set(id, { answers, waiting: workers.length, done: finish, timer });
      const message = question(id);
      for (const worker of workers) send(worker, message);
    });
  }

  /** A worker answered question `id`. */
  answer(id: number, value: unknown): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    pending.answers.push(value);
    if (--pending.waiting > 0) return;
    clearTimeout(pending.timer);
    pending.done(pending.answers);
  }
}
