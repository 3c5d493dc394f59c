/**
 * `gpumem pipeline --json FILE`: every stage's run report and the cleanup check between stages
 * (docs/pipeline.md). The report's type is the supervisor's (supervise/pipeline/run.ts); its version lives here.
 */
import { runReportSchema } from './run.js';
import { arrayOf, integer, nullable, object, string, versioned, type DocumentEntry } from './schema.js';

export const PIPELINE_SCHEMA_VERSION = 1;
export const PIPELINE_KIND = 'gpumem.pipeline';

export const pipelineSchema = versioned(PIPELINE_SCHEMA_VERSION, null, {
  name: string,
  file: string,
  startedAtMs: integer,
  durationMs: integer,
  toleranceBytes: integer,
  status: { enum: ['ok', 'failed'] },
  stages: arrayOf(object({
    name: string,
    status: { enum: ['ok', 'failed', 'cleanup-failed', 'skipped', 'not-run'] },
    run: nullable(runReportSchema),
    check: nullable({ type: 'object' }),
    runId: nullable(integer),
  })),
  exit: object({ code: nullable(integer), signal: nullable(string) }),
  pipelineId: nullable(integer),
  runFolder: nullable(string),
}, ['pipelineId', 'runFolder']);

export const pipelineEntry: DocumentEntry = {
  kind: PIPELINE_KIND, kindInDocument: null, version: PIPELINE_SCHEMA_VERSION,
  emittedBy: 'pipeline --json FILE', doc: 'docs/pipeline.md', module: 'src/core/documents/pipeline.ts', schema: pipelineSchema,
};
