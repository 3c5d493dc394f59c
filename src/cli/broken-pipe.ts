/**
 * What a failing stdout or stderr means. A closed pipe (`gpumem … | head -1`) for a command that only prints
 * is the user's choice: exit quietly with 0. A full disk or another write error is a failure: one line, not a
 * stack, and exit 1. For a command that supervises a training run neither may end gpumem (the child would run
 * on unsupervised and its status would be lost): writing stops, supervision goes on and the child's status
 * is returned.
 */
import { EXIT } from './exit-codes.js';

let supervising = false;

/** Called by `run`, `pipeline` and `fit` before they start anything: from now on a failing output is not fatal. */
export function keepRunningOnBrokenPipe(): void {
  supervising = true;
}

/** What bin.ts does about an error on process.stdout or process.stderr: exit (with a line to print, or none), or go on. */
export type OutputErrorAction = { exit: number; line: string | null } | null;

/** For bin.ts's handler on process.stdout and process.stderr; null means ignore it (a supervised run goes on). */
export function outputErrorAction(error: NodeJS.ErrnoException, stream: 'stdout' | 'stderr'): OutputErrorAction {
  if (supervising) return null;
  if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return { exit: EXIT.OK, line: null };
  const why = error.code === 'ENOSPC' ? 'no space left on the device' : (error.code ?? error.message);
  return { exit: EXIT.FINDINGS, line: `gpumem: error: cannot write to ${stream}: ${why}\n` };
}
