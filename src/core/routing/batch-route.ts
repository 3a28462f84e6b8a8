/**
 * The batch driver (docs/routing.md, "Batches"): every element is priced, admitted and retried
 * on its own through the one admission policy, but the elements a node takes in a round travel
 * to it as one upstream request (one permit). The round's sub-batches go out in parallel;
 * elements a node failed, or answered with an error another node may not give, stay open for
 * the next round on another node — each node is tried at most once per element. Waiting,
 * fail-open, the error table, agreement and the 1 s budget work as for a single request.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import {
  AdmissionRound,
  admit,
  endOfRound,
  waitOutRound,
  type Candidate,
  type CandidateGroup,
} from './admission.js';
import { settleAttempt, type Attempt } from './attempt.js';
import {
  REFUSED_BATCH,
  readSubBatchAnswer,
  subBatchBody,
  type ElementProgress,
} from './batch-answer.js';
import { errorFieldsOf, parseAnswer, type Verdict } from './classify.js';
import { isWriteElement, routeWriteElement } from './batch-writes.js';
import { Disputes } from './disputes.js';
import { unansweredJson } from './route-answer.js';
import type { RouteContext } from './route-context.js';

/** What a batch request produced. */
export interface BatchResult {
  /** The JSON array to return, or '' when every element was a notification. */
  readonly body: string;
  /** True when at least one element was answered by a node. */
  readonly forwarded: boolean;
  readonly timedOut: boolean;
  readonly attempts: number;
  readonly credits: number;
  /** Nodes that answered elements, in first-answer order. */
  readonly nodes: readonly string[];
  /** Each element's upstream answer (client id in place), by input index; undefined if none. */
  readonly answers: readonly (string | undefined)[];
  /** Each element's part of `body`, by input index; undefined for a notification. */
  readonly texts: readonly (string | undefined)[];
}

/** One element's routing state. */
interface Pending extends ElementProgress, Candidate {
  /** Taken by an attempt of the current round. */
  claimed: boolean;
  /** The last upstream error answer (client id in place), relayed if no node does better. */
  held: string | undefined;
  /** Unknown errors nodes gave it, awaiting a second opinion. */
  readonly disputes: Disputes;
}

/** Request-lifetime state of a batch: its open elements are the admission candidates. */
class BatchRoute implements CandidateGroup {
  attempts = 0;
  credits = 0;
  forwarded = false;
  failOpen = false;
  readonly nodes: string[] = [];
  /** The elements still open this round, and those the attempt being admitted took. */
  open: Pending[] = [];
  taking: Pending[] = [];

  constructor(
    readonly pending: Pending[],
    readonly headers: ForwardHeaders,
    readonly deadline: number,
    readonly ctx: RouteContext,
  ) {}

  get size(): number {
    return this.open.length;
  }

  candidate(index: number): Candidate | undefined {
    const progress = this.open[index]!;
    return progress.claimed ? undefined : progress;
  }

  take(index: number): void {
    const progress = this.open[index]!;
    progress.claimed = true;
    this.taking.push(progress);
  }

  newRound(now: number): AdmissionRound {
    this.open = this.pending.filter((p) => !p.done);
    for (const progress of this.open) progress.claimed = false;
    return new AdmissionRound(this.ctx.table(), now, this.failOpen);
  }

  /** Admits `node` for what it may take of the open elements; the attempt and its elements. */
  admit(
    node: UpstreamNode,
    round: AdmissionRound,
    now: number,
    permitHeld = false,
  ): Attempt | undefined {
    this.taking = [];
    return admit(node, this, round, now, permitHeld);
  }
}

function isErrorAnswer(text: string): boolean {
  return typeof errorFieldsOf(parseAnswer(Buffer.from(text))) !== 'string';
}

function classifySubBatch(status: number, body: Buffer, elements: unknown): Verdict {
  return readSubBatchAnswer(status, body, elements as readonly ElementProgress[]);
}

/** What a settled sub-batch means for each of its elements. */
function afterAttempt(attempt: Attempt, elements: Pending[], state: BatchRoute): void {
  if (attempt.state === 'failed') throw attempt.error;
  if (attempt.state !== 'done') return;
  const node = attempt.node;
  const now = attempt.endedAt;
  if (attempt.verdict === REFUSED_BATCH) {
    node.refusesBatches = true;
    // Not tried in any useful sense: the elements may go to this node again, one at a time.
    for (const progress of elements) progress.tried.splice(progress.tried.indexOf(node), 1);
    return;
  }
  const events = state.ctx.events;
  for (const progress of elements) {
    const error = progress.error;
    if (progress.done) {
      if (progress.answer !== undefined && !isErrorAnswer(progress.answer)) {
        progress.disputes.answered(now, events);
      }
      continue;
    }
    if (error === undefined) continue;
    if (
      error.verdict.penalty === 'disputed' &&
      progress.disputes.agree(node, error.key, now, events)
    ) {
      progress.answer = error.text;
      progress.done = true;
      continue;
    }
    progress.held = error.text;
  }
  if (elements.some((p) => p.done && p.answer !== undefined)) {
    state.forwarded = true;
    if (!state.nodes.includes(node.name)) state.nodes.push(node.name);
  }
}

async function dispatch(attempt: Attempt, elements: Pending[], state: BatchRoute): Promise<void> {
  state.attempts++;
  state.credits += attempt.credits;
  attempt.ctx = state.ctx;
  attempt.deadline = state.deadline;
  attempt.classify = classifySubBatch;
  attempt.subject = elements;
  await settleAttempt(attempt, subBatchBody(elements), state.headers, false, state.ctx.clock.now());
  afterAttempt(attempt, elements, state);
}

/** Walks the ranked table once, sending each node what it takes; resolves when all answered. */
async function runRound(round: AdmissionRound, state: BatchRoute): Promise<boolean> {
  const sent: Array<Promise<void>> = [];
  const now = state.ctx.clock.now();
  for (const node of round.ranked) {
    if (state.open.every((p) => p.claimed)) break;
    const attempt = state.admit(node, round, now);
    if (attempt !== undefined) sent.push(dispatch(attempt, state.taking, state));
  }
  await Promise.all(sent);
  return sent.length > 0;
}

function assemble(state: BatchRoute, timedOut: boolean): BatchResult {
  const parts: string[] = [];
  const answers: (string | undefined)[] = [];
  const texts: (string | undefined)[] = [];
  for (const progress of state.pending) {
    const idJson = progress.element.idJson;
    // Never a synthetic error where an upstream answered: its error goes back instead.
    const upstream = progress.answer ?? progress.held;
    const routed = idJson !== undefined && progress.element.method !== undefined;
    answers.push(routed ? upstream : undefined);
    if (idJson === undefined) {
      texts.push(undefined);
      continue;
    }
    if (upstream !== undefined && progress.held === upstream) state.forwarded = true;
    const text = upstream ?? unansweredJson(timedOut, idJson);
    texts.push(text);
    parts.push(text);
  }
  const body = parts.length === 0 ? '' : `[${parts.join(',')}]`;
  return {
    body,
    forwarded: state.forwarded,
    timedOut,
    attempts: state.attempts,
    credits: state.credits,
    nodes: state.nodes,
    answers,
    texts,
  };
}

function pendingOf(element: BatchElement): Pending {
  const progress: Pending = {
    element,
    methodId: element.methodId,
    answer: undefined,
    done: false,
    tried: [],
    claimed: false,
    held: undefined,
    disputes: new Disputes(),
  };
  if (element.method === undefined) {
    progress.answer = errorJson(
      RPC_ERROR.invalidRequest,
      ERROR_MESSAGE.invalidRequest,
      element.idJson ?? 'null',
    );
    progress.done = true;
  }
  return progress;
}

/** Routes the batch's write elements one by one (batch-writes.ts), into their places. */
async function routeWrites(state: BatchRoute, writes: readonly Pending[]): Promise<void> {
  await Promise.all(
    writes.map(async (progress) => {
      const result = await routeWriteElement(progress.element, state.headers, state.ctx);
      progress.answer = result.answer;
      state.attempts += result.attempts;
      state.credits += result.credits;
      if (result.forwarded) state.forwarded = true;
      if (result.node !== undefined && !state.nodes.includes(result.node)) {
        state.nodes.push(result.node);
      }
    }),
  );
}

/** Routes the open elements round by round; true when the budget ran out. */
async function routeReads(state: BatchRoute): Promise<boolean> {
  const ctx = state.ctx;
  for (;;) {
    const now = ctx.clock.now();
    const round = state.newRound(now);
    if (state.open.length === 0) return false;
    if (now >= state.deadline) return true;
    if (await runRound(round, state)) continue;
    const end = endOfRound(round, ctx.table(), state.deadline - ctx.clock.now());
    if (end.kind === 'exhausted' || end.kind === 'timeout') return end.kind === 'timeout';
    if (end.kind === 'fail_open') state.failOpen = true;
    state.taking = [];
    const attempt = await waitOutRound(end, state, round, state.deadline, ctx);
    if (attempt !== undefined) await dispatch(attempt, state.taking, state);
  }
}

/** Routes the valid elements of a batch; invalid ones are answered in place. */
export async function routeBatch(
  elements: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<BatchResult> {
  const state = new BatchRoute(
    elements.map(pendingOf),
    headers,
    ctx.clock.now() + ctx.budgetMs,
    ctx,
  );
  const writes = state.pending.filter((p) => !p.done && isWriteElement(p.element, ctx));
  for (const progress of writes) progress.done = true; // not the batch path's to route
  const [timedOut] = await Promise.all([routeReads(state), routeWrites(state, writes)]);
  return assemble(state, timedOut);
}
