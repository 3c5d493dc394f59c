/**
 * `gpumem run --json`: the run report (docs/run.md), with the history's id for the run, its run folder and,
 * with --batch auto, the chosen batch. The history stores the same report (gpumem.run-detail shows it).
 */
import { RUN_SCHEMA_VERSION, type RunReport } from '../run/report.js';
import { runReportJson } from '../run/json.js';
import { anyObject, arrayOf, integer, nullable, object, string, strings, versioned, type DocumentEntry } from './schema.js';

export { RUN_SCHEMA_VERSION, runReportJson, type RunReport };
export const RUN_KIND = 'gpumem.run';

export const runReportSchema = versioned(RUN_SCHEMA_VERSION, null, {
  argv: strings,
  cwd: string,
  startedAtMs: integer,
  durationMs: integer,
  gpus: nullable(arrayOf()),
  gpuReason: nullable(string),
  env: arrayOf(object({ name: string })),
  preflight: arrayOf(),
  attempts: arrayOf(object({ attempt: integer, ooms: arrayOf(), peaks: arrayOf(), timeline: arrayOf() })),
  retries: integer,
  retryNote: nullable(string),
  exit: object({ code: nullable(integer), signal: nullable(string) }),
  peaks: arrayOf(object({ index: integer, peakBytes: integer })),
  startError: nullable(string),
  runId: nullable(integer),
  runFolder: nullable(string),
  autoBatch: anyObject,
}, ['runId', 'runFolder', 'autoBatch']);

export const runEntry: DocumentEntry = {
  kind: RUN_KIND, kindInDocument: null, version: RUN_SCHEMA_VERSION,
  emittedBy: 'run --json', doc: 'docs/run.md', module: 'src/core/documents/run.ts', schema: runReportSchema,
};
