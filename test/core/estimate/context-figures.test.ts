/** The default CUDA context per generation and CUDA version: measured where bench/results has a GPU, else assumed. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_HIGH_BYTES } from '../../../src/core/estimate/index.js';
import { H100_CUDA13_CONTEXT_BYTES, lazyContext } from '../../../src/core/estimate/gpus.js';

const MiB = 1024 * 1024;
const ROWS = join(__dirname, '../../../bench/results/2026-11-27-h100-80gb/estimate-accuracy/accuracy.jsonl');

/** contextAtEndBytes of every run in the H100 results (full and half batch). */
function measuredAtEnd(): number[] {
  const out: number[] = [];
  for (const line of readFileSync(ROWS, 'utf8').split('\n').filter((l) => l.trim() !== '')) {
    const row = JSON.parse(line) as Record<string, { contextAtEndBytes?: number } | undefined>;
    for (const run of [row.measured, row.measuredHalfBatch]) if (run?.contextAtEndBytes) out.push(run.contextAtEndBytes);
  }
  return out.sort((a, b) => a - b);
}

describe('CUDA context by generation and CUDA version', () => {
  it('Hopper on CUDA 13 (or unnamed) is the H100 measurement: the median of the runs, within their span', () => {
    const runs = measuredAtEnd();
    expect(runs).toHaveLength(17);
    expect(H100_CUDA13_CONTEXT_BYTES).toBe(runs[8]);
    expect([runs[0]! / MiB, runs[16]! / MiB]).toEqual([742, 762]);
    expect(CONTEXT_HIGH_BYTES).toBe(runs[16]);
    for (const cuda of [null, { major: 13, minor: 0 }]) {
      const c = lazyContext('hopper', cuda);
      expect([c.bytes, c.measured]).toEqual([758 * MiB, true]);
      expect(c.source).toContain('bench/results/2026-11-27-h100-80gb');
    }
  });

  it('what was not measured says it is assumed', () => {
    const h12 = lazyContext('hopper', { major: 12, minor: 4 });
    expect([h12.bytes, h12.measured]).toEqual([758 * MiB, false]);
    expect(h12.source).toMatch(/^assumed: .*not measured on CUDA 12\.4/);
    expect([lazyContext('blackwell').bytes, lazyContext('blackwell').measured]).toEqual([640 * MiB, false]);
    for (const g of ['ampere', 'ada', 'turing', 'volta', 'pascal', null] as const) {
      expect([lazyContext(g).bytes, lazyContext(g).measured]).toEqual([512 * MiB, false]);
      expect(lazyContext(g).source).toMatch(/^assumed: /);
    }
  });
});
