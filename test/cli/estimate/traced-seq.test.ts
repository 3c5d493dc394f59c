/**
 * `gpumem estimate --gpu … -- python train.py --seq {seq}`: the longest sequence that fits at the given
 * batch, found by traced probes (real torch, fake tensors). Apart from traced.test.ts so the two run side by side.
 */
import { describe, expect, it } from 'vitest';
import { requireTestPython } from '../../setup/python-venv.js';
import { estimate, traced, TIMEOUT_MS } from './traced-helpers.js';

describe('gpumem estimate with {seq}', () => {
  it('finds the longest sequence of a {seq} command by traced probes, exact to the multiple of 64, and reports the breakdown at it', async () => {
    const t = await traced(['--gpu', '0.8GiB', '--batch', '2', '--steps', '1', '--', requireTestPython(), 'train_llama.py', '--batch-size', '{batch}', '--seq', '{seq}']);
    const q = t.seqSearch!;
    expect(q.batch).toBe(2);
    expect(q.multiple).toBe(64);
    expect(q.maxSeq).toBeGreaterThan(0);
    expect(q.maxSeq % 64).toBe(0);
    const at = (seq: number) => q.probes.find((p) => p.seq === seq);
    // The answer was traced to fit and, when exact, the next multiple was traced not to.
    expect(at(q.maxSeq)?.fits).toBe(true);
    if (q.exact) expect(at(q.maxSeq + 64)?.fits).toBe(false);
    for (const p of q.probes) expect(p.fits).toBe(p.deviceBytes <= t.fit!.budgetBytes);
    // Longer sequences never take less memory in this model (SDPA, no padding).
    const sorted = [...q.probes].sort((a, b) => a.seq - b.seq);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.deviceBytes).toBeGreaterThanOrEqual(sorted[i - 1]!.deviceBytes);
    // The report printed is the trace at the answer: its command carries the length and the batch.
    expect(t.command.slice(-4)).toEqual(['--batch-size', '2', '--seq', String(q.maxSeq)]);
    expect(t.nvidiaSmiBytes).toBe(at(q.maxSeq)!.deviceBytes);
    expect(t.batchSearch).toBeNull();
  }, 8 * TIMEOUT_MS);

  it('substitutes --seq when given, and refuses {seq} with neither --seq nor --gpu before tracing', async () => {
    const t = await traced(['--seq', '192', '--steps', '1', '--', requireTestPython(), 'train_llama.py', '--seq', '{seq}']);
    expect(t.command.slice(-2)).toEqual(['--seq', '192']);
    expect(t.seqSearch).toBeNull();
    const r = await estimate(['--', requireTestPython(), 'train_llama.py', '--seq', '{seq}']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: the command has \{seq\} but no --seq\nhint: give --seq 2048, or --gpu to search/);
  }, 2 * TIMEOUT_MS);
});
