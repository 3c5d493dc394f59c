/**
 * Runs the companion's Python unit tests (test/python/test_*.py, stdlib unittest, fake torch) so that
 * `npm test` fails when they fail.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const HERE = resolve(__dirname);

describe('Python companion (unittest)', () => {
  it('passes every Python test against the fake torch generations', () => {
    const run = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', HERE, '-p', 'test_*.py'], {
      cwd: HERE,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.error, output).toBeUndefined();
    expect(run.status, output).toBe(0);
    // unittest reports "Ran N tests"; zero would mean discovery found nothing and proved nothing.
    const ran = Number(/Ran (\d+) tests?/.exec(output)?.[1] ?? 0);
    expect(ran).toBeGreaterThanOrEqual(20);
    expect(output).not.toMatch(/skipped=/);
  }, 130_000);
});
