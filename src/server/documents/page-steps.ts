/** /api/v1/page/runs/{id}/steps: step timing per attempt and process, with the figures in words (type in ../page-docs.ts). */
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';
import { arrayOf, integer, nullable, number, object, string, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { PageStepsDoc, StepsView } from '../page-docs.js';

export const PAGE_STEPS_KIND = 'gpumem.page-steps';

/** Builds the document from a run's id and its step views. */
export function pageStepsDocument(runId: number, steps: StepsView[]): PageStepsDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: PAGE_STEPS_KIND, runId, steps };
}

export const pageStepsSchema = versioned(SERVE_SCHEMA_VERSION, PAGE_STEPS_KIND, {
  runId: integer,
  steps: arrayOf(object({
    attempt: integer, pid: nullable(integer), steps: integer, meanStepMs: nullable(number), dataWaitShare: nullable(number),
    samplesPerSec: nullable(number), tokensPerSec: nullable(number), text: string,
  })),
});

export const pageStepsEntry: DocumentEntry = {
  kind: PAGE_STEPS_KIND, kindInDocument: PAGE_STEPS_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/page/runs/{id}/steps', doc: 'docs/serve.md', module: 'src/server/documents/page-steps.ts', schema: pageStepsSchema,
};
