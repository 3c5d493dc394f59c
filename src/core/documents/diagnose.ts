/** `gpumem diagnose --json`, `gpumem doctor --json` and the server's /api/v1/diagnosis (docs/diagnose.md). */
import type { ProcessRole, ProcessUtil, Severity } from '../diagnose/types.js';
import { DIAGNOSE_SCHEMA_VERSION } from '../diagnose/engine.js';
import { reportJson, type Fallback } from '../diagnose/report-json.js';
import { deviceSchema, processStates, sampleSourceSchema } from './sample-schema.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, unavailable, versioned, type DocumentEntry, type JsonSchema } from './schema.js';

export { DIAGNOSE_SCHEMA_VERSION, reportJson, type Fallback };
export const DIAGNOSE_KIND = 'gpumem.diagnose';

const nullableInt = nullable(integer);
const nullableString = nullable(string);
/** Bytes per GPU index ('?' for rows not matched to a device). */
const bytesByGpu = mapOf(integer);

/** Evidence: the numbers behind a finding; `details` holds further named facts, a rule's own. */
export const evidenceSchema: JsonSchema = object({
  summary: string,
  pids: arrayOf(integer),
  gpuIndexes: arrayOf(integer),
  bytes: nullableInt,
  details: mapOf({ type: ['number', 'string', 'boolean', 'null', 'array'], items: number }),
});

/** One finding: a rule's id, how bad, what it saw and what to do (also in gpumem.findings). */
export const findingSchema: JsonSchema = object(
  { id: string, severity: oneOf(members<Severity>()(['critical', 'warning', 'info'])), title: string, evidence: evidenceSchema, fix: string, command: string },
  ['command'],
);

/** MemorySplit: PyTorch's split of one process's memory on one GPU, from the companion's statistics. */
export const memorySplitSchema: JsonSchema = object({
  pid: integer,
  gpuUuid: nullableString,
  processUsedBytes: nullableInt,
  allocatedBytes: nullableInt,
  reservedBytes: nullableInt,
  cachedBytes: nullableInt,
  nonPytorchBytes: nullableInt,
  numAllocRetries: nullableInt,
  unavailable,
});

/** DeviceAccounting: used = visibleBytes + notVisibleBytes + residualBytes on one GPU. */
const accountingSchema = object({
  gpuIndex: integer,
  gpuUuid: nullableString,
  name: nullableString,
  totalBytes: nullableInt,
  reservedBytes: nullableInt,
  usedBytes: nullableInt,
  freeBytes: nullableInt,
  visibleBytes: integer,
  notVisibleBytes: integer,
  residualBytes: nullableInt,
  unknownPids: arrayOf(integer),
  pids: arrayOf(integer),
  unknowns: strings,
  pytorch: arrayOf(memorySplitSchema),
});

/** ProcessTree: a launcher or topmost GPU process and the pids under it. */
const treeSchema = object({
  rootPid: integer,
  rootCommand: nullableString,
  launcher: boolean,
  user: nullableString,
  pids: arrayOf(integer),
  bytesByGpu,
  totalBytes: integer,
  unknownPids: arrayOf(integer),
});

/** UserTotal: one user's memory over every GPU. */
const userSchema = object({ user: string, totalBytes: integer, bytesByGpu, pids: arrayOf(integer) });

/** ProcessUtil: a process's utilization over the window. */
const utilSchema = object({ meanPct: number, maxPct: number, samples: integer, idleMs: number, idleWholeWindow: boolean, basis: oneOf(members<ProcessUtil['basis']>()(['process', 'device'])) });

/** One process row as reportJson writes it: derived facts, not the source's row. */
const processViewSchema = object({
  pid: integer,
  gpuIndex: nullableInt,
  gpuUuid: nullableString,
  usedBytes: nullableInt,
  visible: boolean,
  gone: boolean,
  user: nullableString,
  uid: nullableInt,
  ppid: nullableInt,
  command: nullableString,
  state: oneOf(processStates, true),
  ageMs: nullable(number),
  util: nullable(utilSchema),
  contextOnly: boolean,
  role: oneOf(members<ProcessRole>()(['main', 'worker', 'rank', 'kernel'])),
  rank: nullableInt,
  containerId: nullableString,
});

export const diagnoseSchema = versioned(DIAGNOSE_SCHEMA_VERSION, null, {
  command: oneOf(['diagnose', 'doctor']),
  timeMs: integer,
  window: object({ samples: integer, firstMs: integer, lastMs: integer, spanMs: integer }),
  source: sampleSourceSchema,
  recordingNote: nullableString,
  fallback: nullable(object({ reason: string, recording: string })),
  devices: arrayOf(deviceSchema),
  accounting: arrayOf(accountingSchema),
  trees: arrayOf(treeSchema),
  users: arrayOf(userSchema),
  processes: arrayOf(processViewSchema),
  findings: arrayOf(findingSchema),
});

export const diagnoseEntry: DocumentEntry = {
  kind: DIAGNOSE_KIND, kindInDocument: null, version: DIAGNOSE_SCHEMA_VERSION,
  emittedBy: 'diagnose --json, doctor --json, GET /api/v1/diagnosis', doc: 'docs/diagnose.md', module: 'src/core/documents/diagnose.ts', schema: diagnoseSchema,
};
