/**
 * Setup step: the project-local Python environment `.venv/` with the packages in python/requirements-test.txt
 * (real torch, torchvision, transformers, timm), for the tests that trace real models. Installed once; reused
 * while the stamp (a hash of the requirements file) matches, so a warm run costs one file read.
 *
 * When the install cannot run (no network, no `venv` module) the step does not stop the rest of the suite: it
 * records why in `.venv/.gpumem-install-error`, and every test that needs torch fails through
 * {@link requireTestPython} with that reason and the command to run by hand. Nothing is skipped silently.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const VENV_DIR = join(ROOT, '.venv');
const REQUIREMENTS = join(ROOT, 'python', 'requirements-test.txt');
const STAMP = join(VENV_DIR, '.gpumem-requirements.sha256');
const ERROR_FILE = join(VENV_DIR, '.gpumem-install-error');
/** The Python interpreter inside the test environment. */
export const VENV_PYTHON = join(VENV_DIR, 'bin', 'python');
// A first install downloads torch and its CUDA wheels (a few GB): generous, but bounded so CI never hangs.
const INSTALL_TIMEOUT_MS = 45 * 60_000;

const HOW_TO = `python3 -m venv .venv && .venv/bin/pip install -r python/requirements-test.txt`;

function requirementsHash(): string {
  return createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex');
}

function fail(reason: string): void {
  mkdirSync(VENV_DIR, { recursive: true });
  writeFileSync(ERROR_FILE, reason);
  process.stderr.write(`python test environment: ${reason}\n  tests that need torch will fail; install by hand: ${HOW_TO}\n`);
}

function runStep(args: string[]): string | null {
  const r = spawnSync(args[0]!, args.slice(1), { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: INSTALL_TIMEOUT_MS });
  if (r.error) return `${args.join(' ')}: ${r.error.message}`;
  if (r.status !== 0) return `${args.join(' ')} exited with ${r.status ?? r.signal}`;
  return null;
}

/** Creates or refreshes `.venv/` when the requirements changed; fast when it is already there. */
export async function buildPythonVenv(): Promise<void> {
  const hash = requirementsHash();
  if (existsSync(VENV_PYTHON) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return;
  rmSync(STAMP, { force: true });
  rmSync(ERROR_FILE, { force: true });
  process.stderr.write('python test environment: installing python/requirements-test.txt into .venv/ (once)\n');
  const problem =
    (existsSync(VENV_PYTHON) ? null : runStep(['python3', '-m', 'venv', VENV_DIR])) ??
    runStep([VENV_PYTHON, '-m', 'pip', 'install', '--disable-pip-version-check', '-q', '-r', REQUIREMENTS]);
  if (problem) {
    fail(problem);
    return;
  }
  writeFileSync(STAMP, hash);
}

/**
 * The interpreter of the test environment, or an error that says what is missing and how to install it.
 * Tests that need real torch call this first, so a missing environment is a failure, never a skip.
 */
export function requireTestPython(): string {
  if (existsSync(VENV_PYTHON) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === requirementsHash()) return VENV_PYTHON;
  const why = existsSync(ERROR_FILE) ? readFileSync(ERROR_FILE, 'utf8') : 'not installed (or python/requirements-test.txt changed since)';
  throw new Error(`the Python test environment .venv/ is missing torch: ${why}; install it with: ${HOW_TO}`);
}
