/**
 * Shared by the supervision fault tests: a real `gpumem` process (dist/) over the fake NVML driver fed by
 * claim files, always bounded in time — a hang is a failure with the output so far, never a stuck suite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { alive, tempDir } from '../supervise/helpers/claims.js';
import { expectNoHang, expectNoStackTrace, type CliResult } from './harness.js';
import { startPump, type Pump } from '../supervise/helpers/pump.js';

// GPUMEM_TEST_BIN runs the cases against another build (to show a case fails on an older one).
export const BIN = process.env.GPUMEM_TEST_BIN ?? resolve(__dirname, '../../dist/cli/bin.js');
export const PROCS = resolve(__dirname, '../fixtures/procs');

export type Result = CliResult;

export interface Started {
  child: ChildProcess;
  output: () => string;
  done: Promise<Result>;
}

/** Starts gpumem; it is killed (and `timedOut` set) when still running after `limitMs`. */
export function startGpumem(args: string[], env: Record<string, string>, limitMs = 15000, stdio: 'pipe' | 'ignore-stdout' = 'pipe'): Started {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', stdio === 'pipe' ? 'pipe' : 'ignore', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  let timedOut = false;
  let peakRssBytes = 0;
  const rss = setInterval(() => {
    try {
      peakRssBytes = Math.max(peakRssBytes, Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024);
    } catch {
      // Exited between samples.
    }
  }, 50);
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, limitMs);
  const done = new Promise<Result>((r) => child.on('close', (code, signal) => {
    clearTimeout(timer);
    clearInterval(rss);
    r({ code, signal, stdout, stderr, timedOut, peakRssBytes });
  }));
  return { child, output: () => stdout + stderr, done };
}

export function gpumem(args: string[], env: Record<string, string>, limitMs = 15000): Promise<Result> {
  return startGpumem(args, env, limitMs).done;
}

export interface World { dir: string; db: string; tmp: string; env: Record<string, string>; pump: Pump; remove(): void }

/** A private world: claims folder + fake NVML pump (2 H100s), its own TMPDIR, HOME and XDG folders. */
export function world(): World {
  const t = tempDir('gpumem-adv-sup-');
  const pump = startPump(t.dir);
  const tmp = join(t.dir, 'tmp');
  mkdirSync(tmp);
  const env = {
    PATH: process.env.PATH ?? '', HOME: t.dir, TMPDIR: tmp, XDG_DATA_HOME: join(t.dir, 'data'), XDG_RUNTIME_DIR: join(t.dir, 'runtime'),
    ...pump.env,
  };
  return { dir: t.dir, db: join(t.dir, 'history.db'), tmp, env, pump, remove: () => { pump.stop(); t.remove(); } };
}

export const node = (script: string, ...args: string[]): string[] => [process.execPath, join(PROCS, script), ...args];

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `ok` every 20 ms until true or `limitMs` passed; returns its last value. */
export async function until(ok: () => boolean, limitMs = 10000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!ok() && Date.now() < end) await sleep(20);
  return ok();
}

/** The suite's failure classes (harness.ts): a hang or a stack trace fails with its class name first. */
export function expectClean(r: Result, what: string): void {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
}

/** Fails with "ESCAPE" when a process of the run is still alive: it got away from supervision. */
export function expectAllEnded(pids: readonly number[], what: string): void {
  const left = pids.filter((pid) => alive(pid));
  if (left.length > 0) throw new Error(`ESCAPE: ${what}: pid ${left.join(', ')} still running`);
}
