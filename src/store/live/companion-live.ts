/**
 * The live companion files on disk: `gpumem run` replaces its file atomically as statistics arrive and
 * removes it at the end of the attempt; `gpumem diagnose` reads every file and keeps only processes whose
 * (pid, start time) still match /proc and whose supervisor is still the same running process.
 *
 * Folder: `$XDG_RUNTIME_DIR/gpumem` (per-user, tmpfs, cleared at logout) or, without it,
 * `<tmp>/gpumem-<uid>`; created with mode 0700. One file per supervisor: `companion-<pid>.json`.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { parseLiveCompanionDoc, type LiveCompanionDoc, type LiveCompanionProcess } from '../../core/companion/index.js';
import { isGpumemError } from '../../core/index.js';
import { readStartTicks, type ProcOptions } from '../../sources/index.js';

/** The folder the live files live in, for this user. */
export function liveCompanionDir(env: Readonly<Record<string, string | undefined>>): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && runtime.startsWith('/')) return join(runtime, 'gpumem');
  return join(env.TMPDIR && env.TMPDIR.startsWith('/') ? env.TMPDIR : tmpdir(), `gpumem-${userInfo().uid}`);
}

/** The file a supervisor with this pid writes. */
export function liveCompanionPath(env: Readonly<Record<string, string | undefined>>, supervisorPid: number): string {
  return join(liveCompanionDir(env), `companion-${supervisorPid}.json`);
}

/**
 * Replaces the file at `path` with `doc` (temporary file + rename, so a reader sees the old or the new
 * document, never half of one). Failures are returned, not thrown: publishing is a convenience for
 * diagnose and must never disturb the supervised run.
 */
export function writeLiveCompanion(path: string, doc: LiveCompanionDoc): string | null {
  try {
    const dir = join(path, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(doc), { mode: 0o600 });
    renameSync(tmp, path);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Removes the file (and its temporary sibling); a missing file is fine. */
export function removeLiveCompanion(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.${process.pid}.tmp`, { force: true });
}

export interface LiveCompanionEntry extends LiveCompanionProcess {
  /** The `gpumem run` that publishes it. */
  supervisorPid: number;
  /** The file it came from. */
  file: string;
}

function sameProcess(pid: number, startTicks: number | null, proc: ProcOptions): boolean {
  const now = readStartTicks(pid, proc);
  return now !== null && (startTicks === null || now === startTicks);
}

/**
 * Reads every live file in the folder and returns the processes they describe, keyed by pid. A file whose
 * supervisor is gone or was replaced by another process with the same pid is ignored, as is a child whose
 * pid no longer has the recorded start time, and any file that is malformed or not this user's.
 */
export function readLiveCompanion(env: Readonly<Record<string, string | undefined>>, proc: ProcOptions = {}): Map<number, LiveCompanionEntry> {
  const dir = liveCompanionDir(env);
  const out = new Map<number, LiveCompanionEntry>();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^companion-\d+\.json$/.test(n));
  } catch {
    return out;
  }
  const uid = userInfo().uid;
  for (const name of names) {
    const file = join(dir, name);
    let doc: LiveCompanionDoc;
    try {
      // A file another user planted in a shared tmp folder is not evidence about our processes.
      if (statSync(file).uid !== uid) continue;
      doc = parseLiveCompanionDoc(readFileSync(file, 'utf8'), file);
    } catch (error) {
      if (isGpumemError(error) || (error as NodeJS.ErrnoException).code) continue;
      throw error;
    }
    if (!sameProcess(doc.supervisorPid, doc.supervisorStartTicks, proc)) continue;
    for (const p of doc.processes) {
      if (!sameProcess(p.pid, p.startTicks, proc)) continue;
      out.set(p.pid, { ...p, supervisorPid: doc.supervisorPid, file });
    }
  }
  return out;
}

