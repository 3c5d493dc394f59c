/** /api/v1/page/runs/{id}/split: the PyTorch split of a run at each GPU's peak (type in ../page-docs.ts). */
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';
import { arrayOf, boolean, integer, nullable, number, object, string, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { PageSplitDoc, SplitView } from '../page-docs.js';

export const PAGE_SPLIT_KIND = 'gpumem.page-split';

/** Builds the document; `perSample` is true when the run's samples also carry the split over time. */
export function pageSplitDocument(runId: number, splits: SplitView[], perSample: boolean): PageSplitDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: PAGE_SPLIT_KIND, runId, splits, perSample };
}

export const pageSplitSchema = versioned(SERVE_SCHEMA_VERSION, PAGE_SPLIT_KIND, {
  runId: integer,
  splits: arrayOf(object({ attempt: integer, gpu: string, atS: nullable(number), allocatedBytes: nullable(integer), reservedBytes: nullable(integer), text: string })),
  perSample: boolean,
});

export const pageSplitEntry: DocumentEntry = {
  kind: PAGE_SPLIT_KIND, kindInDocument: PAGE_SPLIT_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/page/runs/{id}/split', doc: 'docs/serve.md', module: 'src/server/documents/page-split.ts', schema: pageSplitSchema,
};
