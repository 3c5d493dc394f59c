/**
 * `estimate -- python …` on a program that fails on its own before importing torch (prints its error, exits with a
 * status): gpumem says so with the program's own last error lines, not "ended without importing torch" and a hint
 * about training steps.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../setup/python-venv.js';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';

const SCRIPTS = join(__dirname, '../fixtures/estimate/trace');

describe('estimate on a program that fails before importing torch', () => {
  it('prints its exit status and its own last error lines, and a hint that the error is the program\'s', async () => {
    const r = await gpumem(['estimate', '--', requireTestPython(), join(SCRIPTS, 'fails_before_torch.py')],
      { cwd: SCRIPTS, timeoutMs: 60_000, env: { PATH: process.env.PATH } });
    expectNoHang(r, 'estimate of a failing program');
    expectNoStackTrace(r, 'estimate of a failing program');
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/stopped: the program exited with status 2 before importing torch; its last error lines: usage: fails_before_torch\.py --data FILE \| fails_before_torch\.py: error: --data \/nonexistent\/train\.csv: no such file$/);
    expect(lines[1]).toMatch(/^hint: that is the program's own error/);
    expect(r.stderr).not.toMatch(/training step \(forward/);
  }, 70_000);
});
