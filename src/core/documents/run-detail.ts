/** `gpumem runs show ID --json` and the server's /api/v1/runs/{id}: one stored run and its report (docs/run.md). */
import { RUNS_SCHEMA_VERSION, runRowSchema } from './runs.js';
import { RUN_SCHEMA_VERSION } from '../run/report.js';
import { runReportFields } from './run-schema.js';
import { nullable, presentFieldsOnly, strings, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

export const RUN_DETAIL_KIND = 'gpumem.run-detail';

export interface RunDetailDoc<Run, Report> {
  schemaVersion: typeof RUNS_SCHEMA_VERSION;
  run: Run;
  report: Report | null;
  reportDamage: string[];
}

/** Builds the document; `report` is null while the run is running or when it was cut off. */
export function runDetailDocument<Run, Report>(run: Run, report: Report | null, reportDamage: string[]): RunDetailDoc<Run, Report> {
  return { schemaVersion: RUNS_SCHEMA_VERSION, run, report, reportDamage };
}

/**
 * The stored report: the run report as gpumem.run writes it (without the members only `run --json` adds), each
 * field typed where present. None is required: the history's reader takes a report with fields missing (one
 * stored by an older gpumem) without calling it damaged.
 */
const storedReportSchema = presentFieldsOnly(versioned(RUN_SCHEMA_VERSION, null, runReportFields));

export const runDetailSchema: JsonSchema = {
  ...versioned(RUNS_SCHEMA_VERSION, null, {
    run: runRowSchema,
    report: {
      ...nullable({ type: 'object' }),
      description: "the stored run report (docs/run.md); every process's step summary is in attempts[].plugins.companion.processes[].steps (docs/companion.md); null while the run is running or was cut off",
    },
    reportDamage: strings,
  }, ['reportDamage']),
  // A report read without damage has the run report's types; a damaged one is shown as stored, and
  // `reportDamage` says what could not be read in it.
  if: { type: 'object', properties: { reportDamage: { type: 'array', maxItems: 0 } } },
  then: { properties: { report: nullable(storedReportSchema) } },
};

export const runDetailEntry: DocumentEntry = {
  kind: RUN_DETAIL_KIND, kindInDocument: null, version: RUNS_SCHEMA_VERSION,
  emittedBy: 'runs show ID --json, GET /api/v1/runs/{id}', doc: 'docs/run.md', module: 'src/core/documents/run-detail.ts', schema: runDetailSchema,
};
