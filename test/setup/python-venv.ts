/**
 * Setup step: the project-local Python environments the tests that trace real models run in.
 * - `.venv/` with python/requirements-test.txt: current torch, torchvision, transformers, timm.
 * - `.venv-torch2old/` with python/requirements-test-old.txt: an older torch 2.x release, so the tracer is
 *   checked against more than one release.
 * Each is installed once and reused while its stamp (a hash of its requirements file) matches, so a warm run
 * costs one file read.
 *
 * Each environment takes 5–6 GB (only CUDA builds of torch are on the package index), so pip runs without its
 * download cache: a cache would hold the same wheels a second time, and two environments plus their cached wheels
 * do not fit on a disk with 15 GB free. The environment itself is what is kept and reused. A failed download is
 * tried again (the package index sometimes drops a multi-GB transfer); a full disk is not.
 *
 * When an install cannot run (no network, no `venv` module, no space) the step does not stop the rest of the
 * suite: it records why, with the end of pip's own message and the free space, in `<folder>/.gpumem-install-error`,
 * and every test that needs that environment fails through its `require()` with that reason and the command to
 * run by hand. Nothing is skipped silently.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// A first install downloads torch and its CUDA wheels (a few GB): generous, but bounded so CI never hangs.
const INSTALL_TIMEOUT_MS = 45 * 60_000;
// Tries of the pip step, and the pause before each new try.
const PIP_TRIES = 3;
const RETRY_PAUSE_MS = 15_000;
// Lines of pip's error output kept in the error file (pip ends with the line that says what went wrong).
const TAIL_LINES = 6;

/** One project-local virtual environment built from one requirements file. */
export interface PythonVenv {
  /** Creates or refreshes the environment when its requirements changed; fast when it is already there. */
  build(): Promise<void>;
  /** The environment's interpreter, or an error that says what is missing and the command that installs it. */
  require(): string;
}

interface StepResult {
  problem: string | null;
  /** The run ended because the disk is full: trying again cannot help. */
  noSpace: boolean;
}

function runStep(args: string[]): StepResult {
  // stderr is captured (and echoed after) so that the reason reaches the error file, not only the console.
  const r = spawnSync(args[0]!, args.slice(1), {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
    encoding: 'utf8',
  });
  const err = r.stderr ?? '';
  if (err) process.stderr.write(err);
  if (r.error) return { problem: `${args.join(' ')}: ${r.error.message}`, noSpace: false };
  if (r.status === 0) return { problem: null, noSpace: false };
  const tail = err.trim().split('\n').slice(-TAIL_LINES).map((l) => l.trim()).filter(Boolean).join(' | ');
  return {
    problem: `${args.join(' ')} exited with ${r.status ?? r.signal}${tail ? ` (pip said: ${tail})` : ''}`,
    noSpace: /No space left on device|ENOSPC/i.test(err),
  };
}

const pause = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** Free space, in GB with one decimal, of the file system that holds `dir`. */
function freeGb(dir: string): string {
  try {
    const s = statfsSync(dir);
    return `${((s.bavail * s.bsize) / 1e9).toFixed(1)} GB free`;
  } catch {
    return 'free space unknown';
  }
}

/** pip install, tried again after a failed download; the last problem, or null once it succeeded. */
function pipInstall(python: string, requirementsPath: string): string | null {
  const args = [python, '-m', 'pip', 'install', '--disable-pip-version-check', '--no-cache-dir', '-q', '-r', requirementsPath];
  let problem: string | null = null;
  for (let attempt = 1; attempt <= PIP_TRIES; attempt++) {
    const r = runStep(args);
    if (r.problem === null) return null;
    problem = `${r.problem}; ${freeGb(ROOT)} on the disk of the checkout; try ${attempt} of ${PIP_TRIES}`;
    if (r.noSpace) return problem;
    if (attempt < PIP_TRIES) {
      process.stderr.write(`python test environment: ${problem}; trying again\n`);
      pause(RETRY_PAUSE_MS * attempt);
    }
  }
  return problem;
}

/**
 * An environment in `folder` (relative to the repository root) holding the packages of `requirements`
 * (a path relative to the root as well).
 */
export function pythonVenv(folder: string, requirements: string): PythonVenv {
  const dir = join(ROOT, folder);
  const requirementsPath = join(ROOT, requirements);
  const python = join(dir, 'bin', 'python');
  const stamp = join(dir, '.gpumem-requirements.sha256');
  const errorFile = join(dir, '.gpumem-install-error');
  const howTo = `python3 -m venv ${folder} && ${folder}/bin/pip install -r ${requirements}`;
  const hash = (): string => createHash('sha256').update(readFileSync(requirementsPath)).digest('hex');
  const ready = (): boolean => existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash();

  return {
    async build() {
      if (ready()) return;
      rmSync(stamp, { force: true });
      rmSync(errorFile, { force: true });
      process.stderr.write(`python test environment: installing ${requirements} into ${folder}/ (once; ${freeGb(ROOT)})\n`);
      const problem =
        (existsSync(python) ? null : runStep(['python3', '-m', 'venv', dir]).problem) ?? pipInstall(python, requirementsPath);
      if (problem) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(errorFile, problem);
        process.stderr.write(`python test environment: ${problem}\n  tests that need ${folder}/ will fail; install by hand: ${howTo}\n`);
        return;
      }
      writeFileSync(stamp, hash());
    },
    require() {
      if (ready()) return python;
      const why = existsSync(errorFile) ? readFileSync(errorFile, 'utf8') : `not installed (or ${requirements} changed since)`;
      throw new Error(`the Python test environment ${folder}/ is missing torch: ${why}; install it with: ${howTo}`);
    },
  };
}

const current = pythonVenv('.venv', 'python/requirements-test.txt');
const older = pythonVenv('.venv-torch2old', 'python/requirements-test-old.txt');

/** The current-torch environment `.venv/`. */
export const VENV_DIR = join(ROOT, '.venv');
/** The Python interpreter inside `.venv/`. */
export const VENV_PYTHON = join(VENV_DIR, 'bin', 'python');

/** Builds `.venv/` (current torch). */
export const buildPythonVenv = (): Promise<void> => current.build();
/** Builds `.venv-torch2old/` (an older torch 2.x). */
export const buildOldTorchVenv = (): Promise<void> => older.build();

/**
 * The interpreter of `.venv/`, or an error that says what is missing and how to install it.
 * Tests that need real torch call this first, so a missing environment is a failure, never a skip.
 */
export const requireTestPython = (): string => current.require();

/** The interpreter of `.venv-torch2old/` (older torch), failing the same way as {@link requireTestPython}. */
export const requireOldTorchPython = (): string => older.require();
