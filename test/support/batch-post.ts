/** Posting a JSON-RPC batch through a test harness and reading the answers back. */
import type { Harness } from './proxy-harness.js';

/** One element of a batch answer, as a client reads it. */
export type Answer = { id: unknown; result?: unknown; error?: { code: number; message: string } };

/** Posts `body` (a batch) and returns the status, the answers in order and the raw text. */
export async function postBatch(
  h: Harness,
  body: unknown,
): Promise<{ status: number; answers: Answer[]; raw: string }> {
  const response = await h.post(body);
  return { status: response.status, answers: response.json as Answer[], raw: response.body };
}
