/**
 * Runs a training program under gpumem's tracer (python/gpumem_torch/trace) and returns the trace's text.
 *
 * The program starts with gpumem's sitecustomize first on PYTHONPATH and GPUMEM_ESTIMATE_TRACE naming a file
 * in a private temporary folder; it runs on fake tensors (no GPU, no real memory) and ends itself after the
 * asked number of steps. A program that hangs is ended after `timeoutMs` — only the child spawned here (its
 * own process group, created by this call), never anything found by name.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GpumemError } from '../core/errors.js';
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

function spawnBounded(argv: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<{ exitCode: number | null; stderrTail: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, cwd, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let tail = '';
    let timedOut = false;
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-STDERR_KEEP);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      // The group id is the child's own pid (detached above): it holds only what this program started.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new GpumemError('CHILD_FAILED', `cannot start ${argv[0]}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, {
        hint: 'give the Python program as: gpumem estimate -- python train.py …',
      }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, stderrTail: tail, timedOut });
    });
  });
}
