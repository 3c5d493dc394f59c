/**
 * What the watchdog does (watchdog.ts tells why it exists). It reads lines from gpumem's pipe —
 * `group PGID LEADER_START_TICKS`, `ended PGID`, `bye` — and at end-of-file without "bye" ends the run's
 * processes: TERM, then KILL after the grace period. It never calls process.exit: once nothing is left to
 * wait for, the event loop empties and the program ends by itself.
 */
import { listPids, readEnviron, readProcStat, type ProcRootOptions } from '../sources/procfs/stat.js';

export interface WatchdogLoopOptions extends ProcRootOptions {
  /** The run's environment entry, "GPUMEM_RUN_MARK=…". */
  marker: string;
  /** Between TERM and KILL. */
  graceMs: number;
  /** The watchdog's own pid: never a target. */
  selfPid: number;
}

interface Target {
  pid: number;
  startTicks: number;
}

/** Between looks at whether the TERM-signalled processes are gone. */
const POLL_MS = 50;

/**
 * The watchdog's memory of the run: the groups gpumem told it about, and whether gpumem said goodbye.
 * Exported for the tests, which drive it with lines and a prepared or real /proc.
 */
export function createWatchdogLoop(o: WatchdogLoopOptions) {
  const groups = new Map<number, number>();
  let pending = '';
  let bye = false;
  const stat = (pid: number) => readProcStat(pid, o);
  const live = (t: Target): boolean => {
    const st = stat(t.pid);
    return st !== null && st.startTicks === t.startTicks && st.state !== 'Z';
  };
  const marked = (pid: number): boolean => readEnviron(pid, o)?.split('\0').includes(o.marker) ?? false;

  /**
   * Processes it can prove belong to the run: members of a group it was told about that started no earlier
   * than that group's leader (a recycled group id is never signalled), and those carrying the marker.
   */
  function targets(): Target[] {
    const out: Target[] = [];
    for (const pid of listPids(o)) {
      if (pid === o.selfPid) continue;
      const st = stat(pid);
      if (!st || st.state === 'Z') continue;
      const leaderStart = groups.get(st.pgid);
      if ((leaderStart !== undefined && st.startTicks >= leaderStart) || marked(pid)) out.push({ pid, startTicks: st.startTicks });
    }
    return out;
  }

  /** Signals each target that is still the process it was when found. */
  function signal(list: readonly Target[], name: NodeJS.Signals): void {
    for (const t of list) {
      if (!live(t)) continue;
      try {
        process.kill(t.pid, name);
      } catch {
        // Gone between the look and the signal, or not ours to signal: nothing more can be done.
      }
    }
  }

  return {
    /** Takes the pipe's text as it arrives; acts on each whole line. */
    feed(text: string): void {
      pending += text;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const [cmd, a, b] = pending.slice(0, nl).split(' ');
        pending = pending.slice(nl + 1);
        if (cmd === 'group') groups.set(Number(a), Number(b));
        else if (cmd === 'ended') groups.delete(Number(a));
        else if (cmd === 'bye') bye = true;
      }
    },
    targets,
    /** End-of-file: nothing to do after "bye"; otherwise TERM now, KILL what is left at the end of the grace. */
    end(now: () => number = Date.now): Promise<void> {
      if (bye) return Promise.resolve();
      const first = targets();
      signal(first, 'SIGTERM');
      const until = now() + o.graceMs;
      return new Promise((resolve) => {
        const poll = (): void => {
          if (!first.some(live)) return resolve();
          if (now() >= until) {
            signal(targets(), 'SIGKILL');
            return resolve();
          }
          setTimeout(poll, POLL_MS);
        };
        poll();
      });
    },
  };
}

/** Runs the watchdog on gpumem's pipe. */
export function watchStdin(stdin: NodeJS.ReadableStream, o: WatchdogLoopOptions): void {
  const loop = createWatchdogLoop(o);
  stdin.on('data', (chunk: Buffer) => loop.feed(chunk.toString('latin1')));
  stdin.on('end', () => void loop.end());
}
