/** /api/v1/page/runs: the Runs page's list, formatted for the page (type in ../page-docs.ts). */
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';
import { arrayOf, integer, object, string, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { PageRunsDoc, PipelineView, RunRowView } from '../page-docs.js';

export const PAGE_RUNS_KIND = 'gpumem.page-runs';

/** Builds the document from the page's run and pipeline rows. */
export function pageRunsDocument(runs: RunRowView[], pipelines: PipelineView[]): PageRunsDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: PAGE_RUNS_KIND, runs, pipelines };
}

export const pageRunsSchema = versioned(SERVE_SCHEMA_VERSION, PAGE_RUNS_KIND, {
  runs: arrayOf(object({ id: integer, started: { ...string, description: 'UTC, YYYY-MM-DD HH:MM:SS' }, duration: string, status: string, peak: string, command: string })),
  pipelines: arrayOf(object({
    id: integer, name: string, started: string, duration: string, status: string,
    stages: arrayOf(object({ runId: integer, stage: string, status: string })),
  })),
});

export const pageRunsEntry: DocumentEntry = {
  kind: PAGE_RUNS_KIND, kindInDocument: PAGE_RUNS_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/page/runs', doc: 'docs/serve.md', module: 'src/server/documents/page-runs.ts', schema: pageRunsSchema,
};
