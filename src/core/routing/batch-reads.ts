/**
 * A batch's read elements (docs/routing.md §4, "Batches"), driven as one route by the round
 * driver. Each element walks its own policy's order — `cost` elements the ranked table,
 * `latency` elements fastest first — exactly as it would alone. A round visits each node once:
 * the elements whose next node (in their own order) it is are offered to it together, and
 * those it takes travel to it as one sub-batch (one permit); the round's sub-batches go out in
 * parallel. Elements a node failed, or answered with an error another node may not give, stay
 * open for the next round on another node — each node is tried at most once per element.
 * Waiting, fail-open, the error table, agreement and the budget work as for a single request:
 * they are the driver's and disputes.ts's, not this file's.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { AdmissionRound, admit, type Candidate } from './admission.js';
import { readBatchHeads } from './batch-heads.js';
import { learnLogsLimit, settleAttempt, type Attempt, type AttemptSubject } from './attempt.js';
import {
  REFUSED_BATCH,
  readSubBatchAnswer,
  subBatchBody,
  type ElementProgress,
} from './batch-answer.js';
import { LOGS_LIMIT_ERROR, errorFieldsOf, parseAnswer, type Verdict } from './classify.js';
import { heardAnswer, heardError, type Disputes, type Hearing } from './disputes.js';
import { Reads, methodHeads } from '../chain/method-heads.js';
import { sampleTarget } from './lag-gate.js';
import { IDLE, NEXT, type DrivenRoute, type Played, type RoundStrategy } from './round-driver.js';
import { strategyIndexOf } from './policy-table.js';
import type { RouteContext } from './route-context.js';
import type { TriedNodes } from './tried-nodes.js';

/** One element's routing state. */
export interface Pending extends ElementProgress, Candidate, Hearing<string> {
  readonly tried: TriedNodes;
  /** Its policy walks fastest-first (`latency`) rather than the ranked table. */
  latency: boolean;
  /** Taken by an attempt of the current round. */
  claimed: boolean;
  /** The last upstream error answer (client id in place), relayed if no node does better. */
  held: string | undefined;
  /** Unknown errors nodes gave it, awaiting a second opinion (made on the first). */
  disputes: Disputes | undefined;
}

/** What the whole batch adds up, shared by its reads and its lone elements. */
export interface BatchTotals {
  readonly headers: ForwardHeaders;
  readonly deadline: number;
  readonly ctx: RouteContext;
  attempts: number;
  credits: number;
  forwarded: boolean;
  /** Nodes that answered elements, in first-answer order. */
  readonly nodes: string[];
}

/** How routing the reads ended. */
export interface ReadsEnd {
  readonly timedOut: boolean;
}
const ENDED: ReadsEnd = Object.freeze({ timedOut: false });
const TIMED_OUT: ReadsEnd = Object.freeze({ timedOut: true });

/** The walk orders elements follow: index 0 is `cost` (ranked), 1 is `latency` (byLatency). */
type Orders = readonly [readonly UpstreamNode[], readonly UpstreamNode[]];

/** A batch's read elements; the open ones are the admission candidates. */
export class BatchReads implements DrivenRoute {
  failOpen = false;
  round: AdmissionRound;
  /** The elements still open this round, and those the attempt being admitted took. */
  open: Pending[] = [];
  taking: Pending[] = [];
  #orders: Orders;
  /** While a round walks: each order's next node not yet visited (undefined: none left). */
  readonly #heads: [UpstreamNode | undefined, UpstreamNode | undefined] = [undefined, undefined];
  /** The node being visited by the round's walk; undefined outside it (a permit wait). */
  #visiting: UpstreamNode | undefined = undefined;

  constructor(
    readonly pending: readonly Pending[],
    readonly totals: BatchTotals,
  ) {
    const table = totals.ctx.table();
    this.round = new AdmissionRound(table, totals.ctx.clock.now(), false);
    this.#orders = [table.ranked, table.byLatency];
  }

  get ctx(): RouteContext {
    return this.totals.ctx;
  }

  get deadline(): number {
    return this.totals.deadline;
  }

  get size(): number {
    return this.open.length;
  }

  /** An open element not yet taken this round — during the walk, only where it is due next. */
  candidate(index: number): Candidate | undefined {
    const progress = this.open[index]!;
    if (progress.claimed) return undefined;
    const visiting = this.#visiting;
    if (visiting !== undefined && this.#heads[orderOf(progress)] !== visiting) return undefined;
    return progress;
  }

  take(index: number): void {
    const progress = this.open[index]!;
    progress.claimed = true;
    this.taking.push(progress);
  }

  newRound(now: number): void {
    this.open = this.pending.filter((p) => !p.done);
    for (const progress of this.open) progress.claimed = false;
    const table = this.ctx.table();
    this.round = new AdmissionRound(table, now, this.failOpen);
    this.#orders = [table.ranked, table.byLatency];
  }

  /**
   * The round's walk: the next node to visit — the next node of the first order that still has
   * elements to place — or undefined when the walk is over. Visiting it passes it in both
   * orders, so each node is visited once per round.
   */
  nextVisit(visited: ReadonlySet<UpstreamNode>): UpstreamNode | undefined {
    for (let order = 0; order < 2; order++) {
      this.#heads[order] = firstUnvisited(this.#orders[order]!, visited);
    }
    for (let order = 0; order < 2; order++) {
      const head = this.#heads[order];
      if (head !== undefined && hasUnclaimed(this.open, order)) return head;
    }
    return undefined;
  }

  /**
   * Sampling (issue 26), as for a single request: on the batch's first round, once heads were
   * read at all, a due sample sends the batch first to a same-tier node whose head is unknown
   * or old (lag-gate.ts sampleTarget, asked for the first head-showing element). Undefined:
   * no sample this time (a plain fleet never gets here).
   */
  sampleVisit(now: number): { node: UpstreamNode; attempt: Attempt | undefined } | undefined {
    if (this.totals.attempts !== 0 || this.round.chain?.active !== true) return undefined;
    const first = firstShowingHead(this.open);
    if (first === undefined) return undefined;
    const node = sampleTarget(first, this.round, now);
    if (node === undefined) return undefined;
    this.#heads[0] = this.#heads[1] = node;
    return { node, attempt: this.admit(node, now) };
  }

  /** Admits `node` for the open elements due there (collected in `taking`). */
  admit(node: UpstreamNode, now: number): Attempt | undefined {
    this.taking = [];
    this.#visiting = node;
    try {
      return admit(node, this, this.round, now);
    } finally {
      this.#visiting = undefined;
    }
  }
}

function orderOf(progress: Pending): 0 | 1 {
  return progress.latency ? 1 : 0;
}

// Index loops, not find/some with a closure: the walk asks these once per node it visits.

/** The first node of `order` the round has not visited yet. */
function firstUnvisited(
  order: readonly UpstreamNode[],
  visited: ReadonlySet<UpstreamNode>,
): UpstreamNode | undefined {
  for (let i = 0; i < order.length; i++) if (!visited.has(order[i]!)) return order[i];
  return undefined;
}

/** Whether an open element of walk order `order` is still to be taken this round. */
function hasUnclaimed(open: readonly Pending[], order: number): boolean {
  for (let i = 0; i < open.length; i++) {
    const progress = open[i]!;
    if (!progress.claimed && orderOf(progress) === order) return true;
  }
  return false;
}

/** The first open element whose method's answer shows a head. */
function firstShowingHead(open: readonly Pending[]): Pending | undefined {
  for (let i = 0; i < open.length; i++) {
    const reads = methodHeads(open[i]!.methodId)?.reads;
    if (reads !== undefined && reads !== Reads.nothing) return open[i];
  }
  return undefined;
}

/** What a sub-batch attempt carries: its elements, which read the node's answer. */
class SubBatch implements AttemptSubject {
  constructor(
    readonly elements: readonly Pending[],
    readonly ctx: RouteContext,
    readonly deadline: number,
  ) {}

  classify(status: number, body: Buffer): Verdict {
    return readSubBatchAnswer(status, body, this.elements);
  }
}

function isErrorAnswer(text: string): boolean {
  return typeof errorFieldsOf(parseAnswer(Buffer.from(text))) !== 'string';
}

/** What a settled sub-batch means for each of its elements. */
function afterAttempt(attempt: Attempt, elements: readonly Pending[], totals: BatchTotals): void {
  if (attempt.state === 'failed') throw attempt.error;
  if (attempt.state !== 'done') return;
  const node = attempt.node;
  const now = attempt.endedAt;
  if (attempt.verdict === REFUSED_BATCH) {
    node.refusesBatches = true;
    // Not tried in any useful sense: the elements may go to this node again, one at a time.
    for (const progress of elements) progress.tried.remove(node);
    return;
  }
  const events = totals.ctx.events;
  for (const progress of elements) {
    if (progress.done) {
      const answer = progress.answer;
      // Parsed only when another node's error waits for this opinion.
      if (progress.disputes !== undefined && answer !== undefined && !isErrorAnswer(answer)) {
        heardAnswer(progress, now, events);
      }
      continue;
    }
    const error = progress.error;
    if (error === undefined) continue;
    if (error.verdict === LOGS_LIMIT_ERROR) learnLogsLimit(node, Buffer.from(error.text), events);
    if (heardError(progress, node, error.verdict, error.key, error.text, now, events)) {
      progress.answer = error.text;
      progress.done = true;
    }
  }
  // Answered, or (a notification, owed nothing) delivered: the node served the batch.
  if (elements.some((p) => p.done && (p.answer !== undefined || p.element.idJson === undefined))) {
    totals.forwarded = true;
    if (!totals.nodes.includes(node.name)) totals.nodes.push(node.name);
  }
}

async function dispatch(
  attempt: Attempt,
  elements: Pending[],
  totals: BatchTotals,
  round: AdmissionRound,
): Promise<void> {
  const ctx = totals.ctx;
  totals.attempts++;
  totals.credits += attempt.credits;
  // Each element's attempt under its own strategy, as the same request alone is counted.
  for (const element of elements) ctx.metrics.strategyAttempt(strategyIndexOf(element.latency));
  attempt.subject = new SubBatch(elements, ctx, totals.deadline);
  await settleAttempt(attempt, subBatchBody(elements), totals.headers, false, ctx.clock.now());
  if (attempt.state === 'done') readBatchHeads(attempt, elements, round);
  afterAttempt(attempt, elements, totals);
}

/** Walks the round once, sending each node what it takes; resolves when all answered. */
async function runRound(reads: BatchReads, now: number): Promise<Played<ReadsEnd>> {
  const sent: Array<Promise<void>> = [];
  const visited = new Set<UpstreamNode>();
  const sample = reads.sampleVisit(now);
  if (sample !== undefined) {
    visited.add(sample.node);
    if (sample.attempt !== undefined)
      sent.push(dispatch(sample.attempt, reads.taking, reads.totals, reads.round));
  }
  for (let node = reads.nextVisit(visited); node !== undefined; node = reads.nextVisit(visited)) {
    visited.add(node);
    const attempt = reads.admit(node, now);
    if (attempt !== undefined)
      sent.push(dispatch(attempt, reads.taking, reads.totals, reads.round));
  }
  if (sent.length === 0) {
    reads.taking = []; // what a permit wait admits collects here
    return IDLE;
  }
  await Promise.all(sent);
  return NEXT;
}

/** The batch strategy: every round sends each node one sub-batch of what it takes. */
export const SUB_BATCHES: RoundStrategy<BatchReads, ReadsEnd> = {
  play(reads, now) {
    reads.newRound(now);
    return reads.open.length === 0 ? Promise.resolve(ENDED) : runRound(reads, now);
  },
  async playWaited(reads, attempt) {
    await dispatch(attempt, reads.taking, reads.totals, reads.round);
    return NEXT;
  },
  giveUp(reads, kind) {
    return kind === 'timeout' && reads.pending.some((p) => !p.done) ? TIMED_OUT : ENDED;
  },
};
