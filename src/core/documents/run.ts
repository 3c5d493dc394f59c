/**
 * `gpumem run --json`: the run report (docs/run.md), with the history's id for the run, its run folder and,
 * with --batch auto, the chosen batch. The history stores the same report (gpumem.run-detail shows it).
 */
import { RUN_SCHEMA_VERSION, type RunReport } from '../run/report.js';
import { runReportJson } from '../run/json.js';
import { accumulationPlanSchema } from './estimate.js';
import { runReportFields } from './run-schema.js';
import { arrayOf, boolean, integer, nullable, object, oneOf, string, strings, versioned, type DocumentEntry } from './schema.js';

export { RUN_SCHEMA_VERSION, runReportJson, type RunReport };
export const RUN_KIND = 'gpumem.run';

export const runReportSchema = versioned(RUN_SCHEMA_VERSION, null, {
  ...runReportFields,
  runId: nullable(integer),
  runFolder: nullable(string),
  // AutoBatch without its GPU UUIDs: what --batch auto chose and why.
  autoBatch: object({
    method: oneOf(['trace', 'measured']),
    batch: integer,
    accum: integer,
    maxBatch: integer,
    exact: boolean,
    gpus: arrayOf(integer),
    freeBytes: integer,
    budgetBytes: integer,
    predictedBytes: nullable(integer),
    effectiveBatch: nullable(integer),
    accumulation: nullable(accumulationPlanSchema),
    reasons: strings,
    measuredPeakBytes: nullable(integer),
  }),
}, ['runId', 'runFolder', 'autoBatch']);

export const runEntry: DocumentEntry = {
  kind: RUN_KIND, kindInDocument: null, version: RUN_SCHEMA_VERSION,
  emittedBy: 'run --json', doc: 'docs/run.md', module: 'src/core/documents/run.ts', schema: runReportSchema,
};
