/** The pids of a `cascade serve --workers N` primary's children (its workers), from /proc. */
import { readFileSync } from 'node:fs';

export function workerPids(primary: number): number[] {
  return readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter((pid) => pid !== '')
    .map(Number);
}
