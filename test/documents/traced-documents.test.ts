/**
 * The traced estimate's documents (`estimate --json -- CMD`, and with --stages), built by the real builders from a
 * trace written in the tracer's format, validate against their registered schemas; the CLI itself needs PyTorch
 * to trace a step, so the end-to-end run is in the torch tier. A broken copy of each is rejected.
 */
import { describe, expect, it } from 'vitest';
import { allocatorModel, buildTracedReport } from '../../src/core/documents/estimate-traced.js';
import { parseStepTrace } from '../../src/core/estimate/index.js';
import { traceStages } from '../../src/orchestrate/traced-stages.js';
import { documentProblems } from '../helpers/document-schemas.js';
import { handStep } from '../core/estimate/trace-lines.js';

const GiB = 1024 ** 3;

const traced = (budgetBytes: number | null) => buildTracedReport(
  parseStepTrace(handStep()),
  ['python', 'train.py', '--batch', '{batch}'],
  { budget: budgetBytes === null ? null : { gpu: 'test GPU', capacityBytes: budgetBytes, margin: 0 }, gpuName: 'test GPU', contextBytes: 500 * 1024 ** 2, workspaceBytes: 0 },
  allocatorModel(null, '2.15.0'),
);

/** The document as the CLI prints it: through JSON. */
const printed = (value: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

describe('the traced estimate documents', () => {
  it('a traced report validates as gpumem.estimate-traced, with and without a GPU to fit', () => {
    for (const budget of [null, 80 * GiB]) {
      const doc = printed(traced(budget));
      expect(documentProblems('gpumem.estimate-traced', doc)).toEqual([]);
      expect(documentProblems('gpumem.estimate-traced', { ...doc, peakRequestedBytes: null })).toEqual(['/peakRequestedBytes must be integer']);
    }
  });

  it('the per-stage document validates as gpumem.estimate-traced-stages', async () => {
    const doc = printed(await traceStages(['frozen', 'full'], 4, 80 * GiB, true, async () => traced(80 * GiB), 3));
    expect(documentProblems('gpumem.estimate-traced-stages', doc)).toEqual([]);
    const stages = doc.stages as Array<Record<string, unknown>>;
    const broken = { ...doc, stages: [{ ...stages[0], report: { ...(stages[0]?.report as object), kind: 'trace-stages' } }] };
    expect(documentProblems('gpumem.estimate-traced-stages', broken)).toContain('/stages/0/report/kind must be equal to constant');
  });
});
