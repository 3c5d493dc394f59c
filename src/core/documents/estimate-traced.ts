/**
 * `gpumem estimate --json -- CMD`: one training step traced on the CPU and replayed through the allocator
 * simulator, and with --stage the per-stage document (docs/estimate.md). The documents carry their own
 * `kind` ('trace', 'trace-stages'), which predates the registry's names.
 */
import { TRACED_SCHEMA_VERSION, TRACED_STAGES_SCHEMA_VERSION, allocatorModel, buildTracedReport, type TracedReport, type TracedStagesReport } from '../estimate/traced-report.js';
import { anyObject, arrayOf, boolean, integer, nullable, number, object, string, strings, versioned, type DocumentEntry } from './schema.js';

export { TRACED_SCHEMA_VERSION, TRACED_STAGES_SCHEMA_VERSION, allocatorModel, buildTracedReport, type TracedReport, type TracedStagesReport };
export const TRACED_KIND = 'gpumem.estimate-traced';
export const TRACED_STAGES_KIND = 'gpumem.estimate-traced-stages';

const nullableInt = nullable(integer);

export const tracedSchema = versioned(TRACED_SCHEMA_VERSION, 'trace', {
  command: strings,
  torchVersion: nullable(string),
  steps: integer,
  allocations: integer,
  peakRequestedBytes: integer,
  peakPhase: string,
  peakStep: integer,
  peakAllocatedBytes: nullableInt,
  peakReservedBytes: nullableInt,
  allocatorSettings: nullable(string),
  numAllocRetries: nullableInt,
  segmentCount: nullableInt,
  contextBytes: integer,
  workspaceBytes: integer,
  nvidiaSmiBytes: integer,
  byCategory: anyObject,
  byModule: arrayOf(object({ module: string, bytes: integer })),
  phasePeaks: arrayOf(object({ phase: string, peakRequestedBytes: integer })),
  timelineBytes: arrayOf(integer),
  fit: nullable(object({ gpu: string, capacityBytes: integer, margin: number, budgetBytes: integer, fits: boolean })),
  batchSearch: nullable(anyObject),
  seqSearch: nullable(anyObject),
  fixes: nullable(arrayOf()),
  notes: strings,
  worldSize: integer,
  largestRank: nullableInt,
  ranks: nullable(arrayOf()),
});

export const tracedStagesSchema = versioned(TRACED_STAGES_SCHEMA_VERSION, 'trace-stages', {
  stages: arrayOf(object({ name: string, report: tracedSchema, fits: nullable(boolean), growth: arrayOf(object({ category: string, deltaBytes: integer })) })),
  fix: nullable(anyObject),
});

export const tracedEntry: DocumentEntry = {
  kind: TRACED_KIND, kindInDocument: 'trace', version: TRACED_SCHEMA_VERSION,
  emittedBy: 'estimate --json -- CMD', doc: 'docs/estimate.md', module: 'src/core/documents/estimate-traced.ts', schema: tracedSchema,
};
export const tracedStagesEntry: DocumentEntry = {
  kind: TRACED_STAGES_KIND, kindInDocument: 'trace-stages', version: TRACED_STAGES_SCHEMA_VERSION,
  emittedBy: 'estimate --json --stages NAMES -- CMD holding {stage}', doc: 'docs/estimate.md', module: 'src/core/documents/estimate-traced.ts', schema: tracedStagesSchema,
};
