/** /api/v1/runs/{id}/samples: a run's memory timeline, peaks, OOMs and PyTorch split per attempt (type in ../page-docs.ts). */
import { RUNS_SCHEMA_VERSION } from '../../core/documents/runs.js';
import { anyObject, arrayOf, integer, nullable, object, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { RunSamplesAttempt, RunSamplesDoc } from '../page-docs.js';

export const RUN_SAMPLES_KIND = 'gpumem.run-samples';

/** Builds the document from a run's id and its attempts' series. */
export function runSamplesDocument(runId: number, attempts: RunSamplesAttempt[]): RunSamplesDoc {
  return { schemaVersion: RUNS_SCHEMA_VERSION, kind: RUN_SAMPLES_KIND, runId, attempts };
}

const bytesByUuid = { type: 'object', additionalProperties: integer } as const;

export const runSamplesSchema = versioned(RUNS_SCHEMA_VERSION, RUN_SAMPLES_KIND, {
  runId: integer,
  attempts: arrayOf(object({
    attempt: nullable(integer),
    timeline: arrayOf(object({ tMs: integer, bytes: bytesByUuid })),
    peaks: arrayOf(),
    ooms: arrayOf(),
    pytorch: arrayOf(anyObject),
    pytorchTimeline: arrayOf(object({ tMs: integer, allocatedBytes: bytesByUuid, reservedBytes: bytesByUuid })),
  })),
});

export const runSamplesEntry: DocumentEntry = {
  kind: RUN_SAMPLES_KIND, kindInDocument: RUN_SAMPLES_KIND, version: RUNS_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/runs/{id}/samples', doc: 'docs/serve.md', module: 'src/server/documents/run-samples.ts', schema: runSamplesSchema,
};
