/**
 * Setup step: the project-local Python environments the tests that trace real models run in.
 * - `.venv/` with python/requirements-test.txt: current torch, torchvision, transformers, timm.
 * - `.venv-torch2old/` with python/requirements-test-old.txt: an older torch 2.x release, so the tracer is
 *   checked against more than one release.
 * Each is installed once and reused while its stamp (a hash of its requirements file) matches, so a warm run
 * costs one file read.
 *
 * When an install cannot run (no network, no `venv` module) the step does not stop the rest of the suite: it
 * records why in `<folder>/.gpumem-install-error`, and every test that needs that environment fails through its
 * `require()` with that reason and the command to run by hand. Nothing is skipped silently.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// A first install downloads torch and its CUDA wheels (a few GB): generous, but bounded so CI never hangs.
const INSTALL_TIMEOUT_MS = 45 * 60_000;

/** One project-local virtual environment built from one requirements file. */
export interface PythonVenv {
  /** Creates or refreshes the environment when its requirements changed; fast when it is already there. */
  build(): Promise<void>;
  /** The environment's interpreter, or an error that says what is missing and the command that installs it. */
  require(): string;
}

function runStep(args: string[]): string | null {
  const r = spawnSync(args[0]!, args.slice(1), { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: INSTALL_TIMEOUT_MS });
  if (r.error) return `${args.join(' ')}: ${r.error.message}`;
  if (r.status !== 0) return `${args.join(' ')} exited with ${r.status ?? r.signal}`;
  return null;
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
      process.stderr.write(`python test environment: installing ${requirements} into ${folder}/ (once)\n`);
      const problem =
        (existsSync(python) ? null : runStep(['python3', '-m', 'venv', dir])) ??
        runStep([python, '-m', 'pip', 'install', '--disable-pip-version-check', '-q', '-r', requirementsPath]);
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
