/** `gpumem estimate --json` from a model file, a config or a parameter count (docs/estimate.md). */
import { ESTIMATE_SCHEMA_VERSION, buildEstimateReport, type EstimateReport } from '../estimate/report.js';
import { anyObject, arrayOf, integer, nullable, object, string, strings, versioned, type DocumentEntry } from './schema.js';

export { ESTIMATE_SCHEMA_VERSION, buildEstimateReport, type EstimateReport };
export const ESTIMATE_KIND = 'gpumem.estimate';

export const estimateSchema = versioned(ESTIMATE_SCHEMA_VERSION, null, {
  model: object({ label: string, source: string, totalParams: integer, trainableParams: integer }),
  setup: anyObject,
  environment: anyObject,
  batch: integer,
  activationBytesPerSample: integer,
  activationMethod: string,
  peak: anyObject,
  phases: arrayOf(),
  fit: nullable(anyObject),
  accumulation: nullable(anyObject),
  stages: nullable(arrayOf()),
  unfreeze: nullable(arrayOf()),
  assumptions: strings,
  peakRangeBytes: anyObject,
  notes: strings,
});

export const estimateEntry: DocumentEntry = {
  kind: ESTIMATE_KIND, kindInDocument: null, version: ESTIMATE_SCHEMA_VERSION,
  emittedBy: 'estimate --json (model file, config or --params)', doc: 'docs/estimate.md', module: 'src/core/documents/estimate.ts', schema: estimateSchema,
};
