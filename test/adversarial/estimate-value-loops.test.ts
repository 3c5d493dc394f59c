/**
 * `estimate -- python …` on programs that loop on tensor values, which fake tensors do not have: a Hugging Face
 * ViT (its weights are initialised by torch's truncated-normal rejection loop) must trace, and a program's own
 * loop that waits for a value must end with one error line naming the line, not run until --trace-timeout.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../setup/python-venv.js';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';

const SCRIPTS = join(__dirname, '../fixtures/estimate/trace');
const TRACE_MS = 120_000;

describe('estimate on programs that loop on tensor values', () => {
  it.each([[[]], [['--amp']]])('a tiny Hugging Face ViT (%j) traces to the end', async (extra) => {
    const r = await gpumem(['estimate', '--json', '--trace-timeout', '60', '--', requireTestPython(), join(SCRIPTS, 'train_vit_tiny.py'), ...extra],
      { cwd: SCRIPTS, timeoutMs: TRACE_MS, env: { PATH: process.env.PATH } });
    expectNoHang(r, 'estimate of a tiny ViT');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).steps).toBe(2);
  }, TRACE_MS + 10_000);

  it('a loop waiting for a value is one error line naming its line', async () => {
    const r = await gpumem(['estimate', '--trace-timeout', '60', '--', requireTestPython(), join(SCRIPTS, 'value_loop.py')],
      { cwd: SCRIPTS, timeoutMs: TRACE_MS, env: { PATH: process.env.PATH } });
    expectNoHang(r, 'estimate of a value loop');
    expectNoStackTrace(r, 'estimate of a value loop');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/data-dependent loop: value_loop\.py:5 read a tensor's value 10000 times/);
    expect(r.stderr).not.toMatch(/did not finish/);
  }, TRACE_MS + 10_000);
});
