/**
 * The run folder: where a supervised run keeps files too large for the history database (PyTorch memory
 * snapshots written on OOM). It sits next to the history: `<history dir>/runs/<name>`, where the name is
 * the run's history id, or its start time and gpumem's pid when the run is not recorded.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GpumemError } from '../core/errors.js';

/** The folder for a run: `runs/<runId>` beside the database, else `runs/<UTC start>-<pid>`. */
export function runFolderPath(dbPath: string, run: { runId: number | null; startedAtMs: number; pid: number }): string {
  const name = run.runId !== null ? String(run.runId) : `${new Date(run.startedAtMs).toISOString().replace(/[:.]/g, '-')}-${run.pid}`;
  return join(dirname(dbPath), 'runs', name);
}

/** Creates the folder (mode 0700: snapshots hold stack traces of the user's code). Throws STORE_ERROR with a hint. */
export function createRunFolder(path: string): string {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    return path;
  } catch (error) {
    throw new GpumemError('STORE_ERROR', `cannot create the run folder ${path}: ${(error as Error).message}`, {
      hint: 'choose a writable history location with --db PATH (the run folder sits next to it)',
      cause: error,
    });
  }
}
