/** `gpumem fit --json -- CMD`: the largest batch that fits, from ≤3 measured runs (docs/fit.md). */
import type { RunReason } from '../fit/planner.js';
import { FIT_SCHEMA_VERSION, buildFitReport, type FitReport } from '../fit/report.js';
import { accumulationPlanSchema } from './estimate.js';
import { arrayOf, boolean, integer, members, nullable, number, object, oneOf, string, strings, versioned, type DocumentEntry } from './schema.js';

export { FIT_SCHEMA_VERSION, buildFitReport, type FitReport };
export const FIT_KIND = 'gpumem.fit';

const nullableInt = nullable(integer);

/** FitRun: one measured run of the search, with the GPUs' peaks in rank order. */
const runSchema = object({
  batch: integer,
  reason: oneOf(members<RunReason>()(['probe', 'verify', 'refit', 'bisect'])),
  ok: boolean,
  oom: boolean,
  peakBytes: nullableInt,
  predictedBytes: nullableInt,
  fits: boolean,
  perGpuPeakBytes: arrayOf(nullableInt),
});

export const fitSchema = versioned(FIT_SCHEMA_VERSION, null, {
  argv: strings,
  steps: integer,
  freeBytesAtStart: integer,
  targetFill: number,
  targetBytes: integer,
  batch: nullableInt,
  peakBytes: nullableInt,
  line: nullable(object({ fixedBytes: integer, perSampleBytes: integer })),
  predictedBatch: nullableInt,
  predictionErrorPct: nullable(number),
  firstFailingBatch: nullableInt,
  stopReason: string,
  accumulation: nullable(accumulationPlanSchema),
  measuredBytesPerSample: nullableInt,
  worldSize: integer,
  gpus: arrayOf(object({ index: integer, uuid: nullable(string), freeBytesAtStart: integer, targetBytes: integer })),
  runs: arrayOf(runSchema),
});

export const fitEntry: DocumentEntry = {
  kind: FIT_KIND, kindInDocument: null, version: FIT_SCHEMA_VERSION,
  emittedBy: 'fit --json -- CMD', doc: 'docs/fit.md', module: 'src/core/documents/fit.ts', schema: fitSchema,
};
