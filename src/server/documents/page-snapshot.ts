/**
 * A snapshot analysed for the page (`view=page` on /api/v1/snapshots and /api/v1/runs/{id}/snapshots/{n}):
 * facts, sites and simulations as text rows (type in ../page-docs.ts). Without `view=page` those routes
 * answer gpumem.snapshot with `source` added.
 */
import { SERVE_SCHEMA_VERSION } from '../../core/documents/server.js';
import { arrayOf, integer, object, string, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { SnapshotDeviceView, SnapshotPageDoc } from '../page-docs.js';
import { textRows } from './schema-parts.js';

export const PAGE_SNAPSHOT_KIND = 'gpumem.page-snapshot';

/** Builds the document from the analysed file's name and size and its devices' views. */
export function pageSnapshotDocument(schemaVersion: number, source: SnapshotPageDoc['source'], devices: SnapshotDeviceView[]): SnapshotPageDoc {
  return { schemaVersion, kind: PAGE_SNAPSHOT_KIND, source, devices };
}

export const pageSnapshotSchema = versioned(SERVE_SCHEMA_VERSION, PAGE_SNAPSHOT_KIND, {
  source: object({ name: string, sizeBytes: integer }),
  devices: arrayOf(object({ device: integer, facts: textRows(2), sites: textRows(3), simulations: textRows(5) })),
});

export const pageSnapshotEntry: DocumentEntry = {
  kind: PAGE_SNAPSHOT_KIND, kindInDocument: PAGE_SNAPSHOT_KIND, version: SERVE_SCHEMA_VERSION,
  emittedBy: 'POST /api/v1/snapshots?view=page, GET /api/v1/runs/{id}/snapshots/{n}?view=page', doc: 'docs/serve.md', module: 'src/server/documents/page-snapshot.ts', schema: pageSnapshotSchema,
};
