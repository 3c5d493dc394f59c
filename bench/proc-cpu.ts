/** CPU time of a running process, from /proc, for the benchmarks that watch a live gpumem command. */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/PID/stat's times (getconf CLK_TCK; 100 on Linux when it cannot say). */
export const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds of `pid` (all its threads) from /proc/PID/stat's user + system ticks. */
export function cpuSecondsByTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/**
 * The last run time seen of each thread of each process measured (by pid and start time: a pid can be reused),
 * so a thread that exits keeps what it used.
 */
const seenNs = new Map<string, Map<string, number>>();

function startTicksOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

/**
 * CPU seconds of `pid`, all its threads, to the nanosecond: the sum of each thread's run time
 * (/proc/PID/task/TID/schedstat, the scheduler's own count). A tick is 10 ms, so over a 20-s span the tick
 * count moves in steps of 0.05 % of a core, a quarter of the 0.2 % the live commands are held to; the run
 * times have no such step. A thread that has exited counts with the time it had when last seen (what it used
 * after that is lost: Node's threads live as long as the process). Where the kernel keeps no schedstat, the
 * ticks.
 */
export function cpuSeconds(pid: number): number {
  const key = `${pid} ${startTicksOf(pid)}`;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpuSecondsByTicks(pid);
  }
  const seen = seenNs.get(key) ?? new Map<string, number>();
  seenNs.set(key, seen);
  for (const tid of threads) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8');
    } catch {
      // Gone since the listing: it keeps its last seen time. No schedstat at all: ticks.
      if (seen.size === 0) return cpuSecondsByTicks(pid);
      continue;
    }
    seen.set(tid, Number(text.split(' ')[0]));
  }
  let ns = 0;
  for (const v of seen.values()) ns += v;
  return ns / 1e9;
}
