/**
 * Runs a training program under gpumem's tracer (python/gpumem_torch/trace) and returns the trace's text.
 *
 * The program starts with gpumem's sitecustomize first on PYTHONPATH and GPUMEM_ESTIMATE_TRACE naming a file
 * in a private temporary folder; it runs on fake tensors (no GPU, no real memory) and ends itself after the
 * asked number of steps. A program that hangs is ended after `timeoutMs` — only the child spawned here (its
 * own process group, created by this call) and what carries the marker this call gave it, never anything
 * found by name; a helper it left holding stderr after exiting is ended the same way a second later.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';
import { ProcessTree } from './proc-tree.js';
import { endProcesses } from './terminate.js';
import { companionPythonDir, companionSiteDir, prependPythonPath } from './companion/python-path.js';

export interface TraceRunOptions {
  /** The user's command (`python train.py …`), or null with `entry` set. */
  command: string[] | null;
  /** `pkg.module:make_step` for `python -m gpumem_torch.trace`. */
  entry: string | null;
  python: string;
  steps: number;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** What the fake GPU reports to the script (torch.cuda.get_device_properties). */
  gpuName: string;
  gpuBytes: number;
  /** Trace with activation checkpointing applied by the tracer (python/gpumem_torch/trace/_checkpoint.py). */
  checkpoint?: boolean;
  /** The PyTorch release the program will run on (--torch-version), when its differences are to be modelled. */
  torchVersion?: string;
  /** One rank of a distributed job, traced on PyTorch's fake process group (estimate --world-size). */
  world?: { rank: number; size: number };
}

export interface TraceRunResult {
  traceText: string;
  exitCode: number | null;
  stderrTail: string;
}

const STDERR_KEEP = 8192;

/** Runs the program under the tracer and returns its trace; throws GpumemError when none was written. */
export async function runTracedProgram(o: TraceRunOptions): Promise<TraceRunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-estimate-'));
  const tracePath = join(dir, 'trace.ndjson');
  const argv = o.entry !== null ? [o.python, '-m', 'gpumem_torch.trace', o.entry] : o.command!;
  const pythonPath = prependPythonPath(companionSiteDir(), prependPythonPath(companionPythonDir(), o.env.PYTHONPATH));
  const env: NodeJS.ProcessEnv = {
    ...o.env,
    PYTHONPATH: o.entry !== null ? prependPythonPath(o.cwd, pythonPath) : pythonPath,
    GPUMEM_ESTIMATE_TRACE: tracePath,
    GPUMEM_ESTIMATE_STEPS: String(o.steps),
    GPUMEM_ESTIMATE_GPU_NAME: o.gpuName,
    GPUMEM_ESTIMATE_GPU_BYTES: String(o.gpuBytes),
    ...(o.checkpoint ? { GPUMEM_ESTIMATE_CHECKPOINT: '1' } : {}),
    ...(o.torchVersion ? { GPUMEM_ESTIMATE_TORCH_VERSION: o.torchVersion } : {}),
    ...(o.world ? { GPUMEM_ESTIMATE_WORLD_SIZE: String(o.world.size), GPUMEM_ESTIMATE_RANK: String(o.world.rank) } : {}),
    // Models built from a config must never reach for a hub while being traced.
    HF_HUB_OFFLINE: o.env.HF_HUB_OFFLINE ?? '1',
  };
  try {
    const { exitCode, stderrTail, timedOut } = await spawnBounded(argv, env, o.cwd, o.timeoutMs);
    if (timedOut) {
      throw new GpumemError('TIMEOUT', `${argv.join(' ')} did not finish ${o.steps} training step(s) within ${Math.round(o.timeoutMs / 1000)} s`, {
        hint: 'a step waiting for input or data (a DataLoader, a prompt)? raise --trace-timeout or trace a step function with --entry',
      });
    }
    if (!existsSync(tracePath)) {
      const last = lastLine(stderrTail);
      throw new GpumemError('CHILD_FAILED', `${argv[0]} ended (exit ${exitCode ?? 'signal'}) before the tracer started${last ? `: ${last}` : ''}`, {
        hint: 'the command must be a Python program that imports torch; check that it runs with this Python',
      });
    }
    return { traceText: readFileSync(tracePath, 'utf8'), exitCode, stderrTail };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

/** How long the pipe may stay open after the program exited: a helper it left behind may hold it for hours. */
const DRAIN_MS = 1000;

/**
 * Spawns the program in its own process group, marked (GPUMEM_RUN_MARK) so that a helper it detaches with
 * setsid is still found. Resolves once the program exited and its stderr closed, or DRAIN_MS after the exit
 * if something it started still holds stderr, or at `timeoutMs`: then (and in the drain case) every
 * process of the marked tree is ended with SIGKILL and the pipe is destroyed, so nothing it left can keep
 * gpumem waiting. Rejects with PROGRAM_NOT_FOUND / PROGRAM_NOT_EXECUTABLE when it cannot be started.
 */
function spawnBounded(argv: string[], baseEnv: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<{ exitCode: number | null; stderrTail: string; timedOut: boolean }> {
  const marker = `GPUMEM_RUN_MARK=estimate-${process.pid}-${randomBytes(6).toString('hex')}`;
  const env = { ...baseEnv, GPUMEM_RUN_MARK: marker.slice('GPUMEM_RUN_MARK='.length) };
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, cwd, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let tree: ProcessTree | null = null;
    let tail = '';
    let timedOut = false;
    let exitCode: number | null = null;
    let done = false;
    let drainTimer: NodeJS.Timeout | null = null;
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-STDERR_KEEP);
    });
    child.stderr!.on('error', () => undefined);
    const finish = async (endTree: boolean): Promise<void> => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (drainTimer) clearTimeout(drainTimer);
      if (endTree && tree) {
        // The group id is the child's own pid (detached above); the marker finds what left the group.
        tree.refresh();
        await endProcesses(tree.running().map((m) => ({ pid: m.pid, startTicks: m.startTicks })), { graceMs: 0 });
      }
      child.stderr!.destroy();
      resolve({ exitCode, stderrTail: tail, timedOut });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void finish(true);
    }, timeoutMs);
    child.once('spawn', () => {
      tree = new ProcessTree(child.pid!, child.pid!, '/proc', { marker });
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(startError(argv[0]!, err));
    });
    child.on('exit', (code) => {
      exitCode = code;
      drainTimer = setTimeout(() => void finish(true), DRAIN_MS);
    });
    child.on('close', (code) => {
      exitCode = code;
      void finish(false);
    });
  });
}

/**
 * The one line for a program that cannot be started, with the status a shell gives: not found (127), or
 * found but not runnable (126).
 */
function startError(program: string, err: NodeJS.ErrnoException): GpumemError {
  const shown = printable(program);
  if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
    return new GpumemError('PROGRAM_NOT_FOUND', `${shown}: command not found`, {
      hint: program.includes('/') ? 'check the path of the Python interpreter' : 'check the interpreter\'s name and PATH, or give its full path: gpumem estimate -- /usr/bin/python3 train.py', cause: err,
    });
  }
  return new GpumemError('PROGRAM_NOT_EXECUTABLE', `${shown}: cannot be executed (${err.code ?? err.message})`, {
    hint: 'give a Python interpreter as the command: gpumem estimate -- python train.py …', cause: err,
  });
}
