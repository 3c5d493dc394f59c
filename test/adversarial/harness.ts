/**
 * The adversarial suite's shared harness: runs the built CLI as a real process under a time limit and
 * classifies what went wrong in the words the suite's summary counts (hang, stack trace, lost record,
 * escape). Each check throws an error whose message starts with its class, so the summary reporter
 * (summary-reporter.ts) can count failures by kind.
 */
import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// GPUMEM_TEST_BIN lets the suite run against another build (to show a case fails on an older one).
export const BIN = process.env.GPUMEM_TEST_BIN ?? fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
export const FAKE_SMI = fileURLToPath(new URL('../fake-smi/', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Highest resident set size seen, in bytes (sampled from /proc while it ran). */
  peakRssBytes: number;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Kill it and report a hang after this long (default 15 s). */
  timeoutMs?: number;
  cwd?: string;
  input?: string;
  /** Output kept per stream, in characters (default 4 million); the rest is read and dropped. */
  maxOutputChars?: number;
  /** Extra spawn options (e.g. uid/gid to run as another user). */
  spawn?: SpawnOptions;
}

/** Runs `gpumem ARGS…` (the built CLI) with a clean environment plus `env`. Never rejects. */
export function gpumem(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, GPUMEM_NVML_LIB: '/nonexistent/libnvidia-ml.so.1', ...options.env };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], ...options.spawn });
  let stdout = '';
  let stderr = '';
  let peakRssBytes = 0;
  const cap = options.maxOutputChars ?? 4_000_000;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout.length < cap ? (stdout += d) : undefined));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr.length < cap ? (stderr += d) : undefined));
  child.stdin!.on('error', () => {});
  child.stdin!.end(options.input ?? '');
  let timedOut = false;
  const rss = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peakRssBytes = Math.max(peakRssBytes, kb * 1024);
    } catch {
      // Exited between ticks.
    }
  }, 50);
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 15_000);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(rss);
      resolve({ code, signal, stdout, stderr, timedOut, peakRssBytes });
    });
  });
}

/** Fails with "HANG" when the run had to be killed. */
export function expectNoHang(r: CliResult, what: string): void {
  if (r.timedOut) throw new Error(`HANG: ${what} did not finish in time (killed); stderr: ${r.stderr.slice(0, 300)}`);
}

/** Fails with "STACK TRACE" when the output carries a JavaScript stack or a bug report. */
export function expectNoStackTrace(r: CliResult, what: string): void {
  const text = `${r.stdout}\n${r.stderr}`;
  if (/\n\s+at .+[(:]\d+:\d+\)?|this is a bug|RangeError|TypeError|Maximum call stack/.test(text)) {
    throw new Error(`STACK TRACE: ${what}: ${text.slice(0, 600)}`);
  }
}

/** Fails with "ESCAPE" when terminal-control bytes from outside reached the output. */
export function expectNoEscape(text: string, what: string): void {
  // Our own colour is off in these runs (not a TTY), so any control byte but newline came from outside.
  const bad = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(text);
  if (bad) throw new Error(`ESCAPE: ${what}: control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')} printed raw`);
}

/** Fails with "LOST RECORD" when fewer records were found than were written. */
export function expectNoLostRecords(found: number, expected: number, what: string): void {
  if (found !== expected) throw new Error(`LOST RECORD: ${what}: ${found} of ${expected} records found`);
}

/** A temporary folder removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface OtherUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * A second local user for "another user must gain nothing" cases: created with useradd when the suite runs
 * as root, else null with the reason (the case is then skipped, visibly, with that reason). Each test file
 * gets its own name (files run in parallel forks, so one file's teardown must not remove another's user);
 * `remove` deletes the user again, and only when this call created it.
 */
export function secondUser(): { user: OtherUser | null; reason: string; remove: () => void } {
  const none = (): void => {};
  if (process.getuid?.() !== 0) return { user: null, reason: 'needs root to create a second user (useradd); not root here', remove: none };
  const name = `gpumem-adv-${process.pid}`;
  const found = lookupUser(name);
  if (found) return { user: found, reason: '', remove: none };
  const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { encoding: 'utf8' });
  const user = lookupUser(name);
  if (!user) return { user: null, reason: `useradd failed: ${made.stderr.trim() || made.error?.message || `status ${made.status}`}`, remove: none };
  return { user, reason: '', remove: () => void spawnSync('userdel', [name], { encoding: 'utf8' }) };
}

/** The user named `name`, or null when there is none. */
export function lookupUser(name: string): OtherUser | null {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  return uid.status === 0 && gid.status === 0 ? { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : null;
}

/** Runs a shell command as `user` (fails the test when it does not succeed). */
export function asUser(user: OtherUser, script: string): void {
  const r = spawnSync('/bin/sh', ['-c', script], { uid: user.uid, gid: user.gid, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  if (r.status !== 0) throw new Error(`as ${user.name}: ${script}: ${r.stderr || r.error?.message}`);
}

/** A process tree of our own for kill/diagnose cases, ended by `stopAll`. */
export const started: Array<{ kill: (signal?: NodeJS.Signals) => boolean }> = [];
export function stopAll(): void {
  for (const c of started.splice(0)) c.kill('SIGKILL');
}

/** Pids started by {@link detached}; {@link endDetached} ends them. */
const detachedPids: number[] = [];

/** Starts `script` in a shell that exits at once, so the process is re-parented to init, as after a crash or nohup. */
export function detached(script: string): number {
  const r = spawnSync('/bin/sh', ['-c', `${script} >/dev/null 2>&1 & echo $!`], { encoding: 'utf8' });
  const pid = Number(r.stdout.trim());
  detachedPids.push(pid);
  return pid;
}

/** SIGKILLs every process {@link detached} started (gone ones are skipped). */
export function endDetached(): void {
  for (const pid of detachedPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** The parent pid of `pid`, from /proc/PID/stat. */
export const ppidOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
