/**
 * Spawns the user's command in its own process group, passes its stdout/stderr through unchanged while
 * keeping a bounded tail for the report, and escalates signals: the signal gpumem received first, then
 * TERM, then KILL, each after a grace period, always to the whole group. Output is forwarded with
 * backpressure (a reader that stops reading pauses the child's stream, so gpumem's memory stays bounded)
 * and a reader that goes away (`| head`) only stops the forwarding: the child runs on, supervised.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { GpumemError } from '../core/errors.js';
import { forwarder } from './forward.js';
import type { ChildExit } from './report.js';

export interface ChildOptions {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Called with every chunk of output (stdout and stderr interleaved as they arrive). */
  onOutput: (text: string) => void;
  /** Bytes of output tail kept for the report. */
  tailBytes: number;
}

export interface RunningChild {
  pid: number;
  pgid: number;
  exited: Promise<ChildExit>;
  /** Forwards `sig` to the group now and escalates to TERM, then KILL, each `graceMs` later. */
  interrupt(sig: NodeJS.Signals, graceMs: number): void;
  /** Sends a signal to the whole group; errors (group gone) are ignored. */
  signalGroup(sig: NodeJS.Signals): void;
  /** Passes a signal to the command itself, not its group; false when it is gone. */
  signalLeader(sig: NodeJS.Signals): boolean;
  /** Waits (bounded) for the output pipes to close, then detaches them: orphans may hold them open. */
  drain(timeoutMs: number): Promise<void>;
  /** The last `tailBytes` of output. */
  tail(): string;
}

/** Starts the child. Throws a GpumemError when the program cannot be started (not found, not executable). */
export async function startChild(options: ChildOptions): Promise<RunningChild> {
  const [file, ...args] = options.argv;
  if (!file) throw new GpumemError('USAGE', 'no command to run', { hint: 'put the command after --, e.g. gpumem run -- python train.py' });
  const child: ChildProcess = spawn(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['inherit', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(new GpumemError('CHILD_FAILED', `cannot start "${file}": ${error.code ?? error.message}`, {
        hint: error.code === 'ENOENT' ? 'check the program name and PATH' : 'check the file is executable', cause: error,
      })));
  });
  const pid = child.pid as number;
  let tail = '';
  const keep = (text: string): void => {
    tail += text;
    if (tail.length > options.tailBytes * 2) tail = tail.slice(-options.tailBytes);
  };
  const detach: Array<() => void> = [];
  const pipe = (from: NodeJS.ReadableStream | null, to: NodeJS.WritableStream): void => {
    if (!from) return;
    const forward = forwarder(from, to);
    detach.push(forward.detach);
    from.on('data', (chunk: Buffer) => {
      forward.write(chunk);
      const text = chunk.toString('utf8');
      keep(text);
      options.onOutput(text);
    });
  };
  pipe(child.stdout, options.stdout);
  pipe(child.stderr, options.stderr);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const t of timers.splice(0)) clearTimeout(t);
  });
  const timers: NodeJS.Timeout[] = [];
  const signalGroup = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      // The group is gone: nothing left to signal.
    }
  };
  let stage = 0;
  const ladder = (first: NodeJS.Signals): NodeJS.Signals[] => (first === 'SIGTERM' ? ['SIGTERM', 'SIGKILL'] : [first, 'SIGTERM', 'SIGKILL']);
  let steps: NodeJS.Signals[] = [];
  const running: RunningChild = {
    pid,
    pgid: pid,
    exited,
    interrupt(sig, graceMs) {
      if (done) return;
      if (steps.length === 0) steps = ladder(sig);
      // A second interrupt skips the rest of the current grace period.
      const step = steps[Math.min(stage, steps.length - 1)] as NodeJS.Signals;
      stage++;
      signalGroup(step);
      for (const t of timers.splice(0)) clearTimeout(t);
      if (stage < steps.length) {
        const timer = setTimeout(() => running.interrupt(sig, graceMs), graceMs);
        timer.unref();
        timers.push(timer);
      }
    },
    signalGroup,
    signalLeader(sig) {
      if (done) return false;
      try {
        process.kill(pid, sig);
        return true;
      } catch {
        return false;
      }
    },
    async drain(timeoutMs) {
      for (const t of timers.splice(0)) clearTimeout(t);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      child.stdout?.destroy();
      child.stderr?.destroy();
      for (const d of detach.splice(0)) d();
    },
    tail: () => (tail.length > options.tailBytes ? tail.slice(-options.tailBytes) : tail),
  };
  return running;
}
