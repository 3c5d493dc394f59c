/**
 * Runs a program to its end without blocking the test worker. A worker blocked in spawnSync for a minute (a real
 * torch import and training on a loaded machine can take that long) misses vitest's own RPC deadline and fails the
 * whole run with "Timeout calling onTaskUpdate", though every test passed; awaiting a child keeps it responsive.
 * The result has spawnSync's shape, so a call site changes only by `await`.
 */
import { spawn } from 'node:child_process';

export interface ProcessResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

export interface ProcessOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  /** Ends the child with SIGTERM after this long (as spawnSync's timeout does). */
  timeout?: number;
  /** Accepted for spawnSync's shape: output is always text, and never cut. */
  encoding?: 'utf8';
  maxBuffer?: number;
}

export function runProcess(command: string, args: readonly string[], options: ProcessOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let error: Error | undefined;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (e) => (error = e));
    const timer = options.timeout ? setTimeout(() => child.kill('SIGTERM'), options.timeout) : null;
    child.on('close', (status, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, ...(error ? { error } : {}) });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
