/**
 * Data-dependent code under the tracer (real torch, fake tensors have no values): sizes that depend on values
 * (x[mask], nonzero) are traced at their largest and said so; a branch on such a size stops the trace with
 * one clear line naming the user's line.
 */
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { estimate, traced, TIMEOUT_MS } from './traced-helpers.js';

describe('gpumem estimate on data-dependent code', () => {
  it('traces x[mask] at its largest size (every row selected) and says so', async () => {
    const t = await traced(['--', requireTestPython(), 'train_data_dependent.py']);
    // Pick's output: all 512 rows of 1024 float32 features, plus its 512-byte boolean mask, saved for backward.
    expect(t.byModule.find((m) => m.module === '1')?.bytes).toBe(512 * 1024 * 4 + 512);
    expect(t.notes).toContain(
      'data-dependent sizes (nonzero, masked_select, x[mask], unique) are traced at their largest (every element selected), so the memory they take is an upper bound',
    );
  }, TIMEOUT_MS);

  it('stops with one clear line when the program branches on such a size', async () => {
    const r = await estimate(['--', requireTestPython(), 'train_data_dependent.py', '--branch']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^gpumem: error: tracing .* stopped: data-dependent control flow: the program branches on, or takes a number from, a size that depends on tensor values \(u\d+ > 0\), which fake tensors do not have \(at train_data_dependent\.py:22\)$/);
    expect(lines[1]).toMatch(/^hint: sizes that depend on values are traced at their largest; make that branch independent of the data/);
  }, TIMEOUT_MS);
});
