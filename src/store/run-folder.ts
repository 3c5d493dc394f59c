/**
 * The run folder: where a supervised run keeps files too large for the history database (PyTorch memory
 * snapshots written on OOM). It sits next to the history: `<history dir>/runs/<name>`, where the name is
 * the run's history id, or its start time and gpumem's pid when the run is not recorded.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';
import { ensurePrivateDir } from './live/private-dir.js';

/** The folder for a run: `runs/<runId>` beside the database, else `runs/<UTC start>-<pid>`. */
export function runFolderPath(dbPath: string, run: { runId: number | null; startedAtMs: number; pid: number }): string {
  const name = run.runId !== null ? String(run.runId) : `${new Date(run.startedAtMs).toISOString().replace(/[:.]/g, '-')}-${run.pid}`;
  return join(dirname(dbPath), 'runs', name);
}

/**
 * Creates the folder (mode 0700: snapshots hold stack traces of the user's code), or reuses it when it is
 * already a private folder of ours. The folder beside the history may be shared (`--db /tmp/h.db`), so a
 * `runs` there, or the run's own folder, that is a symbolic link, another user's, or writable by others is
 * refused: the companion writes its snapshots there, and must not write where another user chose.
 * Throws STORE_ERROR with a hint.
 */
export function createRunFolder(path: string): string {
  try {
    const uid = process.getuid?.();
    if (uid === undefined) {
      mkdirSync(path, { recursive: true, mode: 0o700 });
      return path;
    }
    const parent = dirname(path);
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    const problem = parentProblem(parent, uid);
    if (problem !== null) throw new Error(`refusing to use ${parent}: ${problem}`);
    ensurePrivateDir(path, uid);
    return path;
  } catch (error) {
    throw new GpumemError('STORE_ERROR', `cannot create the run folder ${printable(path)}: ${(error as Error).message}`, {
      hint: 'choose a writable history location of your own with --db PATH (the run folder sits next to it)',
      cause: error,
    });
  }
}

/** Why `dir` (the `runs` folder) cannot hold run folders safely: a link, not a folder, not ours, or writable by others. */
function parentProblem(dir: string, uid: number): string | null {
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) return 'it is a symbolic link';
  if (!st.isDirectory()) return 'it is not a directory';
  if (st.uid !== uid) return `it belongs to uid ${st.uid}, not to uid ${uid}`;
  if ((st.mode & 0o022) !== 0) return `other users can write to it (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}
