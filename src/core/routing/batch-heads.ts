/**
 * Heads from a batch's answers (issue 26): each answered element whose method shows a head is
 * read like a single request's answer (chain/read-heads.ts), and an element answered too stale
 * to relay is reopened for a fresher node in the next round — its answer held, so it is still
 * relayed if no node does better. Elements of methods that show no head cost one array load.
 */
import { LOGS_FILTER, Reads, methodHeads } from '../chain/method-heads.js';
import { readAnswer } from '../chain/read-heads.js';
import type { AdmissionRound } from './admission.js';
import type { Attempt } from './attempt.js';
import type { Pending } from './batch-reads.js';
import { staleAnswer } from './lag-gate.js';

/** Reads the heads `attempt`'s answer showed for `elements`; reopens the stale ones. */
export function readBatchHeads(
  attempt: Attempt,
  elements: readonly Pending[],
  round: AdmissionRound,
): void {
  const chain = round.chain;
  if (chain === undefined) return;
  const node = attempt.node;
  const now = attempt.endedAt;
  for (const progress of elements) {
    const heads = methodHeads(progress.methodId);
    const answer = progress.answer;
    if (
      heads === undefined ||
      heads.reads === Reads.nothing ||
      !progress.done ||
      answer === undefined
    ) {
      continue;
    }
    const body = Buffer.from(answer);
    const request = { requestBody: requestOf(progress) };
    const found = readAnswer(chain, node.heads, heads, request, body, false, now);
    if (!found && heads.blockParam !== LOGS_FILTER) continue;
    if (!staleAnswer(chain, node, progress, round, now)) continue;
    node.metrics.staleAnswer?.(attempt.taken > 0 ? attempt.credits / attempt.taken : 0);
    progress.held = answer;
    progress.answer = undefined;
    progress.done = false;
  }
}

const NO_REQUEST = Buffer.alloc(0);

/** The element's own bytes, when the batch was cut from the client's (else: defaults apply). */
function requestOf(progress: Pending): Buffer {
  const raw = progress.element.raw;
  return raw === undefined ? NO_REQUEST : raw.source.subarray(raw.span.start, raw.span.end);
}
