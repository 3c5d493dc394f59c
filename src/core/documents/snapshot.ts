/**
 * `gpumem snapshot --json FILE` (with `simulation` per device under --simulate / --what-if) and
 * `gpumem snapshot diff --json A B` (docs/snapshot.md).
 */
import { SNAPSHOT_SCHEMA_VERSION, buildReport, diffSnapshots, type SnapshotDiff, type SnapshotReport } from '../snapshot/report.js';
import { anyObject, arrayOf, integer, nullable, object, string, strings, versioned, type DocumentEntry } from './schema.js';

export { SNAPSHOT_SCHEMA_VERSION, buildReport, diffSnapshots, type SnapshotDiff, type SnapshotReport };
export const SNAPSHOT_KIND = 'gpumem.snapshot';
export const SNAPSHOT_DIFF_KIND = 'gpumem.snapshot.diff';

export const snapshotDeviceSchema = object(
  { device: integer, summary: anyObject, sites: arrayOf(), siteCount: integer, request: nullable(anyObject), trace: nullable(anyObject), simulation: nullable(anyObject) },
  ['simulation'],
);

export const snapshotSchema = versioned(SNAPSHOT_SCHEMA_VERSION, SNAPSHOT_KIND, {
  generation: string,
  devices: arrayOf(snapshotDeviceSchema),
  allocatorSettings: nullable(anyObject),
  externalAnnotationCount: integer,
  unknownKeys: strings,
});

export const snapshotDiffSchema = versioned(SNAPSHOT_SCHEMA_VERSION, SNAPSHOT_DIFF_KIND, {
  reservedBytesBefore: integer,
  reservedBytesAfter: integer,
  activeBytesBefore: integer,
  activeBytesAfter: integer,
  sites: arrayOf(),
});

export const snapshotEntry: DocumentEntry = {
  kind: SNAPSHOT_KIND, kindInDocument: SNAPSHOT_KIND, version: SNAPSHOT_SCHEMA_VERSION,
  emittedBy: 'snapshot --json FILE', doc: 'docs/snapshot.md', module: 'src/core/documents/snapshot.ts', schema: snapshotSchema,
};
export const snapshotDiffEntry: DocumentEntry = {
  kind: SNAPSHOT_DIFF_KIND, kindInDocument: SNAPSHOT_DIFF_KIND, version: SNAPSHOT_SCHEMA_VERSION,
  emittedBy: 'snapshot diff --json A B', doc: 'docs/snapshot.md', module: 'src/core/documents/snapshot.ts', schema: snapshotDiffSchema,
};
