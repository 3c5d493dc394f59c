/**
 * What a closed stdout or stderr (`gpumem … | head -1`) means. For a command that only prints, the reader
 * going away is the user's choice: exit quietly with 0. For a command that supervises a training run it
 * must not end gpumem (the child would run on unsupervised and its status would be lost): writing stops,
 * supervision goes on and the child's status is returned.
 */

let supervising = false;

/** Called by `run`, `pipeline` and `fit` before they start anything: from now on a closed pipe is not fatal. */
export function keepRunningOnBrokenPipe(): void {
  supervising = true;
}

/**
 * For bin.ts's handler on process.stdout and process.stderr: true when gpumem should now exit quietly with
 * 0, false when the error is to be ignored (a supervised run goes on). Other errors are rethrown.
 */
export function brokenPipeEndsGpumem(error: NodeJS.ErrnoException): boolean {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  return !supervising;
}
