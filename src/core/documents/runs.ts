/**
 * `gpumem runs --json` and the server's /api/v1/runs: the history's newest runs and pipelines (docs/run.md,
 * History). The rows' types are the store's; the document's version and schema live here.
 */
import { arrayOf, integer, nullable, number, object, string, strings, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

/** Schema version of the run-history documents (`gpumem runs --json`, `runs show --json`, /api/v1/runs…). */
export const RUNS_SCHEMA_VERSION = 1;
export const RUNS_KIND = 'gpumem.runs';

export interface RunsDoc<Run, Pipeline> {
  schemaVersion: typeof RUNS_SCHEMA_VERSION;
  runs: Run[];
  pipelines: Pipeline[];
}

/** Builds the list document from the history's rows. */
export function runsDocument<Run, Pipeline>(runs: Run[], pipelines: Pipeline[]): RunsDoc<Run, Pipeline> {
  return { schemaVersion: RUNS_SCHEMA_VERSION, runs, pipelines };
}

const nullableInt = nullable(integer);

/** A stored run as the history lists it. */
export const runRowSchema: JsonSchema = {
  ...object({
    id: integer,
    pipelineId: nullableInt,
    stage: nullable(string),
    argv: strings,
    cwd: string,
    gpus: nullable(arrayOf(object({ index: integer, uuid: string }, ['uuid']))),
    startedAtMs: integer,
    durationMs: nullableInt,
    status: string,
    exitCode: nullableInt,
    exitSignal: nullable(string),
    retries: integer,
    peakBytes: { ...nullableInt, description: 'peak bytes of the tree, summed over GPUs, max over attempts' },
    meanStepMs: { ...nullable(number), description: "mean step of the last attempt's process with the most steps (the training loop); null without step timing" },
    dataWaitShare: { ...nullable(number), description: 'share of that step spent waiting for data, 0..1' },
    samplesPerSec: { ...nullable(number), description: 'samples per second of step time' },
    unreadable: { type: 'string', description: 'set when the stored row is damaged: what could not be read' },
  }, ['pipelineId', 'stage', 'gpus', 'unreadable']),
  description: 'A stored run as `gpumem runs --json` lists it (docs/run.md, History)',
};

/** A stored pipeline with each stage's run. */
export const pipelineRowSchema: JsonSchema = object({
  id: integer,
  name: nullable(string),
  file: string,
  startedAtMs: integer,
  durationMs: nullableInt,
  status: string,
  stages: arrayOf(object({ runId: integer, stage: nullable(string), status: string })),
});

export const runsSchema = versioned(RUNS_SCHEMA_VERSION, null, { runs: arrayOf(runRowSchema), pipelines: arrayOf(pipelineRowSchema) });

export const runsEntry: DocumentEntry = {
  kind: RUNS_KIND, kindInDocument: null, version: RUNS_SCHEMA_VERSION,
  emittedBy: 'runs --json, GET /api/v1/runs', doc: 'docs/run.md', module: 'src/core/documents/runs.ts', schema: runsSchema,
};
