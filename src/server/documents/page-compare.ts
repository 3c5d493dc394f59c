/** /api/v1/page/compare: two runs side by side as [label, A, B] text rows (type in ../page-docs.ts). */
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';
import { integer, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { PageCompareDoc } from '../page-docs.js';
import { textRows } from './schema-parts.js';

export const PAGE_COMPARE_KIND = 'gpumem.page-compare';

/** Builds the document from the two runs' ids and the compared rows. */
export function pageCompareDocument(a: number, b: number, rows: [string, string, string][]): PageCompareDoc {
  return { schemaVersion: SERVE_SCHEMA_VERSION, kind: PAGE_COMPARE_KIND, a, b, rows };
}

export const pageCompareSchema = versioned(SERVE_SCHEMA_VERSION, PAGE_COMPARE_KIND, { a: integer, b: integer, rows: textRows(3) });

export const pageCompareEntry: DocumentEntry = {
  kind: PAGE_COMPARE_KIND, kindInDocument: PAGE_COMPARE_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/page/compare', doc: 'docs/serve.md', module: 'src/server/documents/page-compare.ts', schema: pageCompareSchema,
};
