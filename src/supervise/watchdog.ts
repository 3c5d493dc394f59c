/**
 * The parent-death guard of a supervised run. If gpumem itself dies without cleaning up (SIGKILL, the OOM
 * killer, a crash), the training tree must not run on unsupervised and unrecorded. A Linux parent-death
 * signal cannot be set on the child from Node (it must be set between fork and exec), so a tiny watchdog
 * process holds a pipe from gpumem: gpumem tells it each attempt's process group and says "bye" when it
 * is done; end-of-file without "bye" means gpumem is gone, and the watchdog ends the run's processes —
 * TERM, then KILL after the grace period — and exits. It signals only processes it can prove belong to
 * the run: those carrying the run's environment marker, and members of a group it was told about that
 * started no earlier than that group's leader (so a recycled group id is never signalled). Its program is
 * watchdog-main.ts with watchdog-loop.ts; this file is gpumem's end of the pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { INSPECTOR_NOWHERE } from './signal-guard.js';

/**
 * How to start the watchdog's program (watchdog-main.ts). Built, it is watchdog-main.js beside this file. Run
 * from the TypeScript sources (the tests), there is only watchdog-main.ts, so Node first loads tsx, the dev
 * dependency that runs TypeScript (as the snapshot analysis worker does).
 */
function watchdogProgram(): string[] {
  const built = new URL('./watchdog-main.js', import.meta.url);
  if (existsSync(built)) return [fileURLToPath(built)];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, fileURLToPath(new URL('./watchdog-main.ts', import.meta.url))];
}

export interface Watchdog {
  /** The watchdog's pid (a child of gpumem that is never part of the run's tree). */
  pid: number | null;
  /** Tells it the process group of an attempt's child and the leader's start ticks. */
  watchGroup(pgid: number, leaderStartTicks: number): void;
  /** The attempt's cleanup is done: its group id may be reused by others from now on. */
  groupEnded(pgid: number): void;
  /** gpumem is done with the run: the watchdog exits without touching anything. */
  release(): void;
}

/**
 * Starts the watchdog for a run whose processes carry `marker` ("GPUMEM_RUN_MARK=…"). It runs in its own
 * session so that the terminal's Ctrl-C (which gpumem forwards itself) does not reach it, and does not
 * keep gpumem's event loop alive. When it cannot be started the run goes on without it (null pid).
 */
export function startWatchdog(marker: string, graceMs: number, env: Readonly<Record<string, string | undefined>>): Watchdog {
  let child: ChildProcess | null = null;
  try {
    // Its environment is gpumem's own, without the marker: it must never find itself or be a member.
    child = spawn(process.execPath, [INSPECTOR_NOWHERE, ...watchdogProgram(), marker, String(graceMs)], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: { ...env } });
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  } catch {
    child = null;
  }
  const send = (line: string): void => {
    if (child?.stdin && !child.stdin.destroyed) child.stdin.write(`${line}\n`);
  };
  return {
    pid: child?.pid ?? null,
    watchGroup: (pgid, start) => send(`group ${pgid} ${start}`),
    groupEnded: (pgid) => send(`ended ${pgid}`),
    release() {
      send('bye');
      child?.stdin?.end();
    },
  };
}
