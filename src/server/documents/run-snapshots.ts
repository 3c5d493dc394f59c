/** /api/v1/runs/{id}/snapshots: the memory snapshots a run wrote on OOM, each with whether it can be read (type in ../page-docs.ts). */
import { RUNS_SCHEMA_VERSION } from '../../core/documents/runs.js';
import { arrayOf, boolean, integer, nullable, object, string, versioned, type DocumentEntry } from '../../core/documents/schema.js';
import type { RunSnapshotsDoc } from '../page-docs.js';

export const RUN_SNAPSHOTS_KIND = 'gpumem.run-snapshots';

/** Builds the document from a run's id and its snapshot files. */
export function runSnapshotsDocument(runId: number, snapshots: RunSnapshotsDoc['snapshots']): RunSnapshotsDoc {
  return { schemaVersion: RUNS_SCHEMA_VERSION, kind: RUN_SNAPSHOTS_KIND, runId, snapshots };
}

export const runSnapshotsSchema = versioned(RUNS_SCHEMA_VERSION, RUN_SNAPSHOTS_KIND, {
  runId: integer,
  snapshots: arrayOf(object({ index: integer, file: string, name: string, available: boolean, sizeBytes: nullable(integer) })),
});

export const runSnapshotsEntry: DocumentEntry = {
  kind: RUN_SNAPSHOTS_KIND, kindInDocument: RUN_SNAPSHOTS_KIND, version: RUNS_SCHEMA_VERSION,
  emittedBy: 'GET /api/v1/runs/{id}/snapshots', doc: 'docs/serve.md', module: 'src/server/documents/run-snapshots.ts', schema: runSnapshotsSchema,
};
