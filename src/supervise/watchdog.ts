/**
 * The parent-death guard of a supervised run. If gpumem itself dies without cleaning up (SIGKILL, the OOM
 * killer, a crash), the training tree must not run on unsupervised and unrecorded. A Linux parent-death
 * signal cannot be set on the child from Node (it must be set between fork and exec), so a tiny watchdog
 * process holds a pipe from gpumem: gpumem tells it each attempt's process group and says "bye" when it
 * is done; end-of-file without "bye" means gpumem is gone, and the watchdog ends the run's processes —
 * TERM, then KILL after the grace period — and exits. It signals only processes it can prove belong to
 * the run: those carrying the run's environment marker, and members of a group it was told about that
 * started no earlier than that group's leader (so a recycled group id is never signalled).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { INSPECTOR_NOWHERE } from './signal-guard.js';

/** The watchdog program, run with `node -e` so it needs no file of its own. Arguments: marker, grace ms. */
const SCRIPT = String.raw`
// First: SIGUSR1 must not start Node's debugger here either (signal-guard.ts), and SIGUSR2 must not end the guard.
process.on('SIGUSR1', () => {});
process.on('SIGUSR2', () => {});
const fs = require('node:fs');
const [marker, graceText] = process.argv.slice(1);
const graceMs = Number(graceText);
const groups = new Map();
let text = '';
let bye = false;
const stat = (pid) => {
  try {
    const s = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], pgid: Number(f[2]), start: Number(f[19]) };
  } catch { return null; }
};
const marked = (pid) => {
  try { return fs.readFileSync('/proc/' + pid + '/environ', 'latin1').split('\0').includes(marker); } catch { return false; }
};
const targets = () => {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    const st = stat(pid);
    if (!st || st.state === 'Z') continue;
    const leaderStart = groups.get(st.pgid);
    if ((leaderStart !== undefined && st.start >= leaderStart) || marked(pid)) out.push({ pid, start: st.start });
  }
  return out;
};
const signal = (list, sig) => {
  for (const t of list) {
    const st = stat(t.pid);
    if (st && st.start === t.start && st.state !== 'Z') try { process.kill(t.pid, sig); } catch {}
  }
};
process.stdin.on('data', (chunk) => {
  text += chunk.toString('latin1');
  let nl;
  while ((nl = text.indexOf('\n')) >= 0) {
    const [cmd, a, b] = text.slice(0, nl).split(' ');
    text = text.slice(nl + 1);
    if (cmd === 'group') groups.set(Number(a), Number(b));
    else if (cmd === 'ended') groups.delete(Number(a));
    else if (cmd === 'bye') bye = true;
  }
});
process.stdin.on('end', () => {
  if (bye) process.exit(0);
  const first = targets();
  signal(first, 'SIGTERM');
  const until = Date.now() + graceMs;
  const poll = () => {
    const left = first.filter((t) => { const st = stat(t.pid); return st && st.start === t.start && st.state !== 'Z'; });
    if (left.length === 0) process.exit(0);
    if (Date.now() >= until) { signal(targets(), 'SIGKILL'); process.exit(0); }
    setTimeout(poll, 50);
  };
  poll();
});
`;

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
    child = spawn(process.execPath, [INSPECTOR_NOWHERE, '-e', SCRIPT, marker, String(graceMs)], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: { ...env } });
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
