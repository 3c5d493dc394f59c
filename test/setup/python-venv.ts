/**
 * Setup step: the project-local Python environments the tests that trace real models run in.
 * - `.venv/` with python/requirements-test.txt: current torch, torchvision, transformers, timm.
 * - `.venv-torch2old/` with python/requirements-test-old.txt: an older torch 2.x release, so the tracer is
 *   checked against more than one release.
 * - `.venv-notebook/` with python/requirements-notebook.txt: ipykernel and jupyter_client (no torch), so the
 *   notebook extension is tested in a real IPython kernel.
 * Each is installed once and reused while its stamp (a hash of its requirements file) matches, so a warm run
 * costs one file read.
 *
 * Each requirements file pins every package and is installed with `--no-deps`, so an environment is the same on
 * every machine; when the file changes the environment is built again from nothing (one made by hand, without a
 * stamp, is completed in place instead). Each takes 4–5 GB (only CUDA
 * builds of torch are on the package index), so pip runs without its download cache (it would hold the same
 * wheels a second time), and venv-place.ts decides where the environment and pip's downloads go when the disk is
 * short. A failed download is tried again (the package index sometimes drops a multi-GB transfer); a full disk
 * is not.
 *
 * When an install cannot run (no network, no `venv` module, no space) the step does not stop the rest of the
 * suite: it records why, with the end of pip's own message and the free space, in `<folder>/.gpumem-install-error`,
 * and every test that needs that environment fails through its `require()` with that reason and the command to
 * run by hand. Nothing is skipped silently.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeRoom, downloadsInRam, placeEnvironment, RAM_DIR, roomFor } from './venv-place.js';

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

function runStep(args: string[], tmpDir?: string): StepResult {
  // stderr is captured (and echoed after) so that the reason reaches the error file, not only the console.
  const r = spawnSync(args[0]!, args.slice(1), {
    cwd: ROOT,
    env: tmpDir ? { ...process.env, TMPDIR: tmpDir } : process.env,
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

/** pip install, tried again after a failed download; the last problem, or null once it succeeded. */
function pipInstall(python: string, requirementsPath: string, tmpDir?: string): string | null {
  const args = [python, '-m', 'pip', 'install', '--disable-pip-version-check', '--no-cache-dir', '--no-deps', '-q', '-r', requirementsPath];
  let problem: string | null = null;
  for (let attempt = 1; attempt <= PIP_TRIES; attempt++) {
    const r = runStep(args, tmpDir);
    if (r.problem === null) return null;
    problem = `${r.problem}; ${describeRoom(roomFor(ROOT))}; try ${attempt} of ${PIP_TRIES}`;
    if (r.noSpace) return problem;
    if (attempt < PIP_TRIES) {
      process.stderr.write(`python test environment: ${problem}; trying again\n`);
      pause(RETRY_PAUSE_MS * attempt);
    }
  }
  return problem;
}

/** Sizes of an environment, measured on a fresh install: what it keeps, and pip's downloads while installing. */
export interface VenvSize {
  installedGb: number;
  downloadGb: number;
  /** What its tests need from it, for the error when it is missing (default "torch"). */
  needs?: string;
}

/** Removes a folder, or only the link when it is a symlink (and then the RAM folder it points to). */
function removeEnvironment(dir: string): void {
  let link: string | null = null;
  try {
    if (lstatSync(dir).isSymbolicLink()) link = readlinkSync(dir);
  } catch {
    return; // nothing there
  }
  rmSync(dir, { recursive: true, force: true });
  if (link?.startsWith(`${RAM_DIR}/gpumem-`)) rmSync(link, { recursive: true, force: true });
}

/**
 * An environment in `folder` (relative to the repository root) holding exactly the packages of `requirements`
 * (a path relative to the root as well). GPUMEM_TEST_VENV_PLACE=disk|ram overrides where a new one goes.
 */
export function pythonVenv(folder: string, requirements: string, size: VenvSize): PythonVenv {
  const dir = join(ROOT, folder);
  const requirementsPath = join(ROOT, requirements);
  const python = join(dir, 'bin', 'python');
  const stamp = join(dir, '.gpumem-requirements.sha256');
  const errorFile = join(dir, '.gpumem-install-error');
  const howTo = `python3 -m venv ${folder} && ${folder}/bin/pip install --no-deps -r ${requirements}`;
  const hash = (): string => createHash('sha256').update(readFileSync(requirementsPath)).digest('hex');
  const ready = (): boolean => existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash();
  // One RAM folder per checkout and environment, so two checkouts never share (or delete) each other's.
  const ramTarget = join(RAM_DIR, `gpumem-${basename(folder)}-${createHash('sha256').update(ROOT).digest('hex').slice(0, 8)}`);

  /** Makes an empty `dir` (or a link to an empty RAM folder); the problem, or null. */
  const prepare = (place: 'disk' | 'ram'): string | null => {
    removeEnvironment(dir);
    if (place === 'disk') return runStep(['python3', '-m', 'venv', dir]).problem;
    rmSync(ramTarget, { recursive: true, force: true });
    const problem = runStep(['python3', '-m', 'venv', ramTarget]).problem;
    if (problem === null) symlinkSync(ramTarget, dir);
    return problem;
  };

  return {
    async build() {
      if (ready()) return;
      // An environment without a stamp was made by hand (the command `require()` suggests) or cut short: pip
      // completes it in place. One whose stamp differs was made from another requirements file, and one our own
      // install failed on may sit where there is no room: both are built anew.
      const adopt = existsSync(python) && !existsSync(stamp) && !existsSync(errorFile);
      const room = roomFor(ROOT);
      const forced = process.env.GPUMEM_TEST_VENV_PLACE;
      const place = forced === 'ram' || forced === 'disk' ? forced : placeEnvironment(room, size.installedGb, size.downloadGb);
      const tmpDir = downloadsInRam(room, size.downloadGb, place, size.installedGb) ? mkdtempSync(join(RAM_DIR, 'gpumem-pip-')) : undefined;
      const why = forced ? 'GPUMEM_TEST_VENV_PLACE' : 'the disk is short';
      const where = adopt ? `the existing ${folder}/` : place === 'ram' ? `${ramTarget} (memory: ${why}), linked from ${folder}/` : `${folder}/`;
      process.stderr.write(`python test environment: installing ${requirements} into ${where} (once; ${describeRoom(room)})\n`);
      try {
        const problem = (adopt ? null : prepare(place)) ?? pipInstall(python, requirementsPath, tmpDir);
        if (problem) {
          mkdirSync(dir, { recursive: true });
          writeFileSync(errorFile, problem);
          process.stderr.write(`python test environment: ${problem}\n  tests that need ${folder}/ will fail; install by hand: ${howTo}\n`);
          return;
        }
        writeFileSync(stamp, hash());
      } finally {
        if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
      }
    },
    require() {
      if (ready()) return python;
      const why = existsSync(errorFile) ? readFileSync(errorFile, 'utf8') : `not installed (or ${requirements} changed since)`;
      throw new Error(`the Python test environment ${folder}/ is missing ${size.needs ?? 'torch'}: ${why}; install it with: ${howTo}`);
    },
  };
}

// Sizes measured on fresh installs of the two requirements files (du of the folder; sum of the wheels).
const current = pythonVenv('.venv', 'python/requirements-test.txt', { installedGb: 4.8, downloadGb: 2.7 });
const older = pythonVenv('.venv-torch2old', 'python/requirements-test-old.txt', { installedGb: 4.6, downloadGb: 2.5 });
// A real IPython kernel (ipykernel, jupyter_client) without torch, for the notebook extension's tests.
const notebook = pythonVenv('.venv-notebook', 'python/requirements-notebook.txt', { installedGb: 0.1, downloadGb: 0.03, needs: 'ipykernel and jupyter_client' });

/** The current-torch environment `.venv/`. */
export const VENV_DIR = join(ROOT, '.venv');
/** The Python interpreter inside `.venv/`. */
export const VENV_PYTHON = join(VENV_DIR, 'bin', 'python');

/** Builds `.venv/` (current torch). */
export const buildPythonVenv = (): Promise<void> => current.build();
/** Builds `.venv-torch2old/` (an older torch 2.x). */
export const buildOldTorchVenv = (): Promise<void> => older.build();
/** Builds `.venv-notebook/` (a real IPython kernel, no torch). */
export const buildNotebookVenv = (): Promise<void> => notebook.build();

/**
 * The interpreter of `.venv/`, or an error that says what is missing and how to install it.
 * Tests that need real torch call this first, so a missing environment is a failure, never a skip.
 */
export const requireTestPython = (): string => current.require();

/** The interpreter of `.venv-torch2old/` (older torch), failing the same way as {@link requireTestPython}. */
export const requireOldTorchPython = (): string => older.require();

/** The interpreter of `.venv-notebook/` (ipykernel, jupyter_client), failing the same way as {@link requireTestPython}. */
export const requireNotebookPython = (): string => notebook.require();
