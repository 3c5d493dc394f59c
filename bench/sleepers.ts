/**
 * The sleeping processes the benchmarks list as GPU processes (real pids, so host facts come from a real /proc),
 * which must not outlive the benchmark. Started one by one from Node, they did: a benchmark stopped by Ctrl-C,
 * a timeout or a crash left thousands of `sleep 3600` behind for an hour, and every later measurement that reads
 * the whole process table (a supervised run's tree scan reads each /proc/PID/stat at 10 Hz) paid for them — a run
 * measured 86 % of a core instead of 15 % with 5,600 of them left. Here one shell starts them all in a process
 * group of its own and waits on a pipe from this process: when the pipe closes (stop(), or this process ending in
 * any way, SIGKILL included) the shell ends its whole group.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Sleepers {
  pids: number[];
  /** Ends every sleeper and the shell that started them. Safe to call twice. */
  stop(): void;
}

// `read` returns at end of input, which is when the pipe's last writer (this process) closes it or dies.
const HOST = 'i=0; while [ "$i" -lt "$1" ]; do sleep 3600 & echo $!; i=$((i+1)); done; echo started; read _; kill -9 0';

function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Starts `count` sleeping processes that end with this process at the latest. */
export async function startSleepers(count: number): Promise<Sleepers> {
  const host = spawn('sh', ['-c', HOST, 'sleepers', String(count)], { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    host.stdin.end();
    try {
      process.kill(-(host.pid as number), 'SIGKILL');
    } catch {
      // The group already ended.
    }
  };
  const pids: number[] = [];
  try {
    for await (const line of createInterface({ input: host.stdout })) {
      if (line === 'started') break;
      pids.push(Number(line));
    }
  } catch (error) {
    stop();
    throw error;
  }
  if (pids.length !== count || pids.some((p) => !Number.isSafeInteger(p) || p <= 1)) {
    stop();
    throw new Error(`started ${pids.length} of ${count} sleeping processes`);
  }
  // `$!` names the forked shell before it becomes `sleep`: a command reading the pid's command line in between
  // would keep "sh" (stable facts are cached per process). Handed out only once every one is `sleep`.
  const deadline = Date.now() + 10_000;
  let waiting = pids;
  while ((waiting = waiting.filter((pid) => commOf(pid) !== 'sleep')).length > 0) {
    if (Date.now() > deadline) {
      stop();
      throw new Error(`${waiting.length} of ${count} sleeping processes did not start sleep within 10 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  host.stdout.destroy();
  // The pipes must not keep this process's event loop alive.
  host.unref();
  return { pids, stop };
}
