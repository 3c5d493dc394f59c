/**
 * `gpumem snapshot --json FILE` (with `simulation` per device under --simulate / --what-if) and
 * `gpumem snapshot diff --json A B` (docs/snapshot.md).
 */
import type { RequestFit } from '../snapshot/summary.js';
import { SNAPSHOT_SCHEMA_VERSION, buildReport, diffSnapshots, type SnapshotDiff, type SnapshotReport } from '../snapshot/report.js';
import { anyObject, arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, versioned, type DocumentEntry } from './schema.js';

export { SNAPSHOT_SCHEMA_VERSION, buildReport, diffSnapshots, type SnapshotDiff, type SnapshotReport };
export const SNAPSHOT_KIND = 'gpumem.snapshot';
export const SNAPSHOT_DIFF_KIND = 'gpumem.snapshot.diff';

const nullableInt = nullable(integer);
const countAndBytes = object({ count: integer, bytes: integer });

/** SiteTotal: live bytes of one allocation site. */
const siteSchema = object({ site: string, bytes: integer, count: integer });

/** DeviceSummary: one device's totals, segments by type, and each pool's fragmentation. */
const summarySchema = object({
  device: integer,
  reservedBytes: integer,
  allocatedBytes: integer,
  activeBytes: integer,
  requestedBytes: nullableInt,
  roundingSlackBytes: nullableInt,
  pendingFreeBytes: integer,
  inactiveBytes: integer,
  segmentCount: integer,
  blockCount: integer,
  allocatedBlockCount: integer,
  segmentsByType: mapOf(countAndBytes),
  expandable: countAndBytes,
  pools: arrayOf(object({
    poolId: nullable(string),
    segmentType: string,
    stream: integer,
    reservedBytes: integer,
    freeBytes: integer,
    largestFreeBytes: integer,
    freeBlockCount: integer,
  })),
});

/** RequestFit: whether a request of a given size fits the free blocks. */
const requestSchema = object({
  requestBytes: integer,
  roundedBytes: integer,
  segmentType: oneOf(members<RequestFit['segmentType']>()(['small', 'large'])),
  fits: boolean,
  freeBytes: integer,
  largestFreeBytes: integer,
  unusableFreeBytes: integer,
  newSegmentBytes: integer,
});

/** LiveMoment: the state right after one trace event. */
const momentFields = { eventIndex: integer, timeUs: nullable(number), allocatedBytes: integer, reservedBytes: integer, sites: arrayOf(siteSchema) };

/** TraceAnalysis: what the allocator trace shows over time. */
const traceSchema = object({
  eventCount: integer,
  actions: mapOf(integer),
  startAllocatedBytes: integer,
  startReservedBytes: integer,
  timeline: arrayOf(object({ eventIndex: integer, timeUs: nullable(number), allocatedBytes: integer, reservedBytes: integer })),
  peak: nullable(object(momentFields)),
  ooms: arrayOf(object({ ...momentFields, requestBytes: integer, deviceFreeBytes: integer })),
});

/** SimulationRun: one replay of the trace under one allocator setting. */
const simulationRunFields = {
  settings: string,
  coversWholeRun: boolean,
  peakReservedBytes: integer,
  peakAllocatedBytes: integer,
  fragmentationAtPeakBytes: integer,
  endReservedBytes: integer,
  endSegmentCount: integer,
  numAllocRetries: integer,
  oomAvoided: nullable(boolean),
  earlierOomCount: integer,
  firstOomEventIndex: nullableInt,
  oomSpareBytes: nullableInt,
};

/** DeviceSimulation: the settings asked about, the recorded run compared with the real one, and every what-if. */
const simulationSchema = object({
  ...simulationRunFields,
  device: integer,
  capacityBytes: nullableInt,
  actual: object({
    ...simulationRunFields,
    match: object({ addressMatches: integer, addressChecks: integer, realEndReservedBytes: integer, realSegmentCount: integer, identicalSegments: integer }),
  }),
  whatIf: arrayOf(object(simulationRunFields)),
});

export const snapshotDeviceSchema = object(
  { device: integer, summary: summarySchema, sites: arrayOf(siteSchema), siteCount: integer, request: nullable(requestSchema), trace: nullable(traceSchema), simulation: nullable(simulationSchema) },
  ['simulation'],
);

export const snapshotSchema = versioned(SNAPSHOT_SCHEMA_VERSION, SNAPSHOT_KIND, {
  generation: oneOf(members<SnapshotReport['generation']>()(['history', 'frames', 'segments-list'])),
  devices: arrayOf(snapshotDeviceSchema),
  // The allocator's settings as the file holds them: names to values of any kind.
  allocatorSettings: nullable(anyObject),
  externalAnnotationCount: integer,
  unknownKeys: strings,
});

export const snapshotDiffSchema = versioned(SNAPSHOT_SCHEMA_VERSION, SNAPSHOT_DIFF_KIND, {
  reservedBytesBefore: integer,
  reservedBytesAfter: integer,
  activeBytesBefore: integer,
  activeBytesAfter: integer,
  sites: arrayOf(object({ site: string, bytesBefore: integer, bytesAfter: integer, deltaBytes: integer, countBefore: integer, countAfter: integer })),
});

/** Where both documents of this module are described and built. */
const HOME = { doc: 'docs/snapshot.md', module: 'src/core/documents/snapshot.ts' } as const;
export const snapshotEntry: DocumentEntry = { kind: SNAPSHOT_KIND, kindInDocument: SNAPSHOT_KIND, version: SNAPSHOT_SCHEMA_VERSION, emittedBy: 'snapshot --json FILE', ...HOME, schema: snapshotSchema };
export const snapshotDiffEntry: DocumentEntry = { kind: SNAPSHOT_DIFF_KIND, kindInDocument: SNAPSHOT_DIFF_KIND, version: SNAPSHOT_SCHEMA_VERSION, emittedBy: 'snapshot diff --json A B', ...HOME, schema: snapshotDiffSchema };
