/**
 * Runs a fixture script under gpumem's tracer directly (sitecustomize first on PYTHONPATH, the trace written to a
 * temporary file) with the test environment's real torch, and returns the parsed trace. For tests that check what
 * the tracer records op by op; `gpumem estimate` itself is run through test/cli/estimate/traced-helpers.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseStepTrace, type StepTrace } from '../../src/core/estimate/index.js';
import { requireTestPython } from '../setup/python-venv.js';
import { runProcess } from './run-process.js';

const ROOT = join(__dirname, '../..');

/** Two steps of `script args` traced; `env` adds GPUMEM_ESTIMATE_* settings (GPU name, torch version …). */
export async function traceDirect(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<StepTrace> {
  return (await traceWithStderr(script, args, env, requireTestPython())).trace;
}

/** The same with a chosen interpreter (e.g. the older torch's), returning what the program wrote to stderr too. */
export async function traceWithStderr(script: string, args: string[], env: NodeJS.ProcessEnv, python: string): Promise<{ trace: StepTrace; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-trace-'));
  try {
    const out = join(dir, 'trace.ndjson');
    const full: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
      PYTHONPATH: `${join(ROOT, 'python/_site')}:${join(ROOT, 'python')}`,
      GPUMEM_ESTIMATE_TRACE: out, GPUMEM_ESTIMATE_STEPS: '2', ...env,
    };
    const r = await runProcess(python, [script, ...args], { env: full, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    return { trace: parseStepTrace(readFileSync(out, 'utf8')), stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
