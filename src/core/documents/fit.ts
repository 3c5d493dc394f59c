/** `gpumem fit --json -- CMD`: the largest batch that fits, from ≤3 measured runs (docs/fit.md). */
import { FIT_SCHEMA_VERSION, buildFitReport, type FitReport } from '../fit/report.js';
import { anyObject, arrayOf, integer, nullable, number, object, strings, versioned, type DocumentEntry } from './schema.js';

export { FIT_SCHEMA_VERSION, buildFitReport, type FitReport };
export const FIT_KIND = 'gpumem.fit';

const nullableInt = nullable(integer);

export const fitSchema = versioned(FIT_SCHEMA_VERSION, null, {
  argv: strings,
  steps: integer,
  freeBytesAtStart: integer,
  targetFill: number,
  targetBytes: integer,
  batch: nullableInt,
  peakBytes: nullableInt,
  line: nullable(anyObject),
  predictedBatch: nullableInt,
  predictionErrorPct: nullable(number),
  firstFailingBatch: nullableInt,
  stopReason: { type: 'string' },
  accumulation: nullable(anyObject),
  measuredBytesPerSample: nullable(number),
  worldSize: integer,
  gpus: arrayOf(),
  runs: arrayOf(object({ perGpuPeakBytes: arrayOf(nullableInt) })),
});

export const fitEntry: DocumentEntry = {
  kind: FIT_KIND, kindInDocument: null, version: FIT_SCHEMA_VERSION,
  emittedBy: 'fit --json -- CMD', doc: 'docs/fit.md', module: 'src/core/documents/fit.ts', schema: fitSchema,
};
