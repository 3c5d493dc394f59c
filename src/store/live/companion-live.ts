/**
 * The live companion files on disk: `gpumem run` replaces its file atomically as statistics arrive and
 * removes it at the end of the attempt; `gpumem diagnose` reads every file and keeps only processes whose
 * (pid, start time) still match /proc and whose supervisor is still the same running process.
 *
 * Folder: `$XDG_RUNTIME_DIR/gpumem` (per-user, tmpfs, cleared at logout) or, without it,
 * `<tmp>/gpumem-<uid>`; created exclusively with mode 0700, and an existing one is used only when it is a
 * real directory of ours that no one else can enter (private-dir.ts). One file per supervisor:
 * `companion-<pid>.json`, read only when it is a regular file of ours below LIVE_FILE_MAX_BYTES.
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { parseLiveCompanionDoc, type LiveCompanionDoc, type LiveCompanionProcess } from '../../core/companion/live.js';
import { isGpumemError } from '../../core/errors.js';
import { readStartTicks, type ProcOptions } from '../../sources/procfs/index.js';
import { ensurePrivateDir, privateDirProblem, readPrivateFile, writePrivateFile } from './private-dir.js';

/** A live document describes a handful of processes; anything larger is not one of ours. */
export const LIVE_FILE_MAX_BYTES = 4 * 1024 * 1024;

const myUid = (): number => process.getuid?.() ?? userInfo().uid;

/** The folder the live files live in, for this user. */
export function liveCompanionDir(env: Readonly<Record<string, string | undefined>>): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && runtime.startsWith('/')) return join(runtime, 'gpumem');
  return join(env.TMPDIR && env.TMPDIR.startsWith('/') ? env.TMPDIR : tmpdir(), `gpumem-${myUid()}`);
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
    ensurePrivateDir(join(path, '..'), myUid());
    writePrivateFile(path, JSON.stringify(doc));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Removes the file; a missing file is fine. Nothing is removed from a folder that is not our private one. */
export function removeLiveCompanion(path: string): void {
  if (privateDirProblem(join(path, '..'), myUid()) === null) rmSync(path, { force: true });
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
  const uid = myUid();
  // A folder someone else made or opened up is not evidence about our processes.
  if (privateDirProblem(dir, uid) !== null) return out;
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^companion-\d+\.json$/.test(n));
  } catch {
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    let doc: LiveCompanionDoc;
    try {
      const read = readPrivateFile(file, uid, LIVE_FILE_MAX_BYTES);
      if (!read.ok) continue;
      doc = parseLiveCompanionDoc(read.text, file);
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

