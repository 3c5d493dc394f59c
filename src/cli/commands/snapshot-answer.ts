/**
 * The run report's replay of a snapshot written at an OOM: read with the data-only reader and replayed
 * through the allocator simulation. Bounded (files over MAX_ANSWER_BYTES are not read, which keeps it to a
 * few seconds) and never failing: a snapshot that cannot be read or replayed gets an answer saying why.
 */
import { statSync } from 'node:fs';
import { answerOomSnapshot, unansweredSnapshot, type SnapshotOomAnswer } from '../../core/allocator/oom-answer.js';
import { formatBytes } from '../../core/units.js';
import { isGpumemError } from '../../core/errors.js';
import { readSnapshotFile } from '../../sources/snapshot-file.js';

/** Larger snapshots are left to `gpumem snapshot FILE --what-if` (reading 256 MiB takes a few seconds here). */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** Reads and replays the snapshot at `path`; every failure becomes the answer's `problem`. */
export function answerSnapshotFile(path: string, maxBytes = MAX_ANSWER_BYTES): SnapshotOomAnswer {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return unansweredSnapshot(path, `cannot be replayed: ${code === 'ENOENT' ? 'no such file' : `cannot open (${code ?? 'error'})`}`);
  }
  try {
    if (size > maxBytes) return unansweredSnapshot(path, `not replayed: ${formatBytes(size)} is over the ${formatBytes(maxBytes)} the report reads`);
    return answerOomSnapshot(path, readSnapshotFile(path));
  } catch (error) {
    // Any fault (a damaged file, or a bug in the reader or the simulation) must not cost the user the report.
    const reason = isGpumemError(error) ? error.message.replace(`${path}: `, '') : `internal error: ${(error as Error).message}`;
    return unansweredSnapshot(path, `cannot be replayed: ${reason}`);
  }
}
