/**
 * Runs the companion's Python unit tests (test/python/test_*.py, stdlib unittest, fake torch) so that
 * `npm test` fails when they fail, and reports each Python test as its own case. The ids are listed when
 * this file is collected; the whole Python suite runs once before the cases read their outcome.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/run-process.js';

const HERE = resolve(__dirname);
const REPORT = resolve(HERE, 'report_json.py');
const ENV = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };

interface Outcome {
  outcome: 'passed' | 'failed' | 'error' | 'skipped';
  details: string;
}

/** The listing runs while the file is collected (it names the cases); the cases themselves run without blocking. */
function pythonNow(args: string[], timeoutMs: number): { json: unknown; output: string } {
  return parsed(spawnSync('python3', [REPORT, ...args], { cwd: HERE, encoding: 'utf8', timeout: timeoutMs, env: ENV, maxBuffer: 64 * 1024 * 1024 }));
}

async function python(args: string[], timeoutMs: number): Promise<{ json: unknown; output: string }> {
  return parsed(await runProcess('python3', [REPORT, ...args], { cwd: HERE, timeout: timeoutMs, env: ENV }));
}

function parsed(run: { stdout: string; stderr: string; error?: Error }): { json: unknown; output: string } {
  const output = `${run.stdout}\n${run.stderr}${run.error ? `\n${String(run.error)}` : ''}`;
  const last = run.stdout?.trim().split('\n').pop() ?? '';
  try {
    return { json: JSON.parse(last), output };
  } catch {
    return { json: null, output };
  }
}

const listed = pythonNow(['--list'], 60_000);
const ids = Array.isArray(listed.json) ? (listed.json as string[]) : [];
let outcomes: Record<string, Outcome> = {};
let runOutput = '';

describe('Python companion (unittest)', () => {
  beforeAll(async () => {
    const ran = await python([], 120_000);
    outcomes = (ran.json ?? {}) as Record<string, Outcome>;
    runOutput = ran.output;
  }, 130_000);

  it('discovers the Python tests (zero would prove nothing)', () => {
    expect(ids.length, listed.output).toBeGreaterThanOrEqual(20);
  });

  for (const id of ids) {
    it(id, () => {
      const result = outcomes[id];
      expect(result, `no outcome reported for ${id}:\n${runOutput}`).toBeDefined();
      // A skipped Python test proves nothing, so it fails here rather than passing quietly.
      expect(result?.outcome, result?.details).toBe('passed');
    });
  }
});
