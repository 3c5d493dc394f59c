/**
 * What a failed write to gpumem's own stdout or stderr means. A closed pipe (`gpumem … | head -1`) is the
 * reader's choice: a command that only prints exits quietly with 0. Any other failure (a full disk: ENOSPC,
 * EDQUOT, EFBIG; EIO) is not the user's choice: a command that only prints says so in one line on the other
 * stream and exits 1. A command that supervises a training run (`run`, `pipeline`, `fit`) must not end for
 * either: the training would run on unsupervised (its watchdog would end it) and its status would be lost. Its
 * writing stops, supervision goes on, the failure is said once on whichever stream still works, and the
 * child's status is returned.
 */
import { exitCodeForOutputFailure } from './exit-codes.js';

let supervising = false;
const said = new Set<string>();

/** Called by `run`, `pipeline` and `fit` before they start anything: from now on no output failure is fatal. */
export function keepRunningOnBrokenPipe(): void {
  supervising = true;
}

/** What bin.ts does about a failed write: exit now with `exitCode`, or go on; `line` goes to the other stream. */
export interface OutputFailureAction {
  exitCode: number | null;
  line: string | null;
}

const STREAM_NAMES = { stdout: 'standard output', stderr: 'standard error' } as const;

/** Decides what a write error on `stream` does (see the module comment); says a failure at most once a stream. */
export function onOutputFailure(stream: 'stdout' | 'stderr', error: NodeJS.ErrnoException): OutputFailureAction {
  const closed = error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';
  if (!supervising) {
    if (closed) return { exitCode: 0, line: null };
    return { exitCode: exitCodeForOutputFailure(), line: `gpumem: error: cannot write to ${STREAM_NAMES[stream]}: ${describe(error)}\nhint: free space where the output goes (or send it elsewhere) and run the command again\n` };
  }
  // A reader that went away is not news; the first real failure of each stream is.
  if (closed || said.has(stream)) return { exitCode: null, line: null };
  said.add(stream);
  return { exitCode: null, line: `gpumem: writing to ${STREAM_NAMES[stream]} failed (${describe(error)}); the run goes on under supervision, its output is no longer shown there (the run's report keeps its tail)\n` };
}

function describe(error: NodeJS.ErrnoException): string {
  const reason: Record<string, string> = { ENOSPC: 'no space left on the device', EDQUOT: 'disk quota exceeded', EFBIG: 'file too large', EIO: 'input/output error' };
  const code = error.code ?? 'error';
  return `${code}: ${reason[code] ?? String(error.message).replace(/[^\x20-\x7e]/g, '?').slice(0, 200)}`;
}
