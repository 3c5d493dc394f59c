/**
 * The fields of a supervised run's report as written (core/run/report.ts through runReportJson): `gpumem run
 * --json`, each stage of `gpumem pipeline --json`, and the report the history stores. Fields the types mark as
 * absent in older reports are optional; plugins other than the companion are any objects, keyed by name.
 */
import type { EnvDecision, ProcessOutcome } from '../run/report.js';
import { allocatorAtOomSchema, companionReportSchema, runFindingSchema } from './companion-report-schema.js';
import { causeSchema, oomEventFields } from './explain.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, type JsonSchema } from './schema.js';

const nullableInt = nullable(integer);
const nullableString = nullable(string);

/** GpuRef: a GPU the run used, by index and UUID. */
const gpuRef = { index: integer, uuid: string, name: nullableString };
export const gpuRefSchema: JsonSchema = object(gpuRef);

/** ChildExit: the program's exit code, or the signal that ended it. */
export const childExitSchema: JsonSchema = object({ code: nullableInt, signal: nullableString });

/** GpuPeak: the run's largest memory on one GPU. */
const gpuPeakSchema = object({ ...gpuRef, peakBytes: integer, atMs: number, chosen: boolean, unknownSamples: integer });

/** ProcessOutcome: a process the cleanup found, and what became of it. */
const processOutcomeSchema = object({
  pid: integer,
  comm: nullableString,
  cmdline: nullable(strings),
  gpuBytes: nullableInt,
  outcome: oneOf(members<ProcessOutcome['outcome']>()(['exited', 'terminated', 'killed', 'skipped', 'failed'])),
  detail: string,
});

/** CleanupReport: what was left of the run after its program exited. */
const cleanupSchema = object({
  leftovers: arrayOf(processOutcomeSchema),
  memoryReleased: boolean,
  waitedMs: number,
  heldByNothing: arrayOf(object({ ...gpuRef, bytes: integer })),
  toleranceBytes: integer,
  survivors: arrayOf(processOutcomeSchema),
  rounds: integer,
  leftoversNotListed: integer,
}, ['survivors', 'rounds', 'leftoversNotListed']);

/** An OOM the program printed, read as `gpumem explain --json` reads it: the event, its causes, the allocator's numbers. */
const oomFindingSchema = object({
  line: integer,
  text: string,
  event: object(oomEventFields),
  causes: arrayOf(causeSchema),
  allocator: allocatorAtOomSchema,
}, ['allocator']);

/** GpuUtilization: a GPU's utilization series over the attempt, with its means. */
const utilizationSchema = object({
  uuid: string,
  index: integer,
  totalBytes: nullableInt,
  meanGpuPct: nullable(number),
  meanTreeSmPct: nullable(number),
  samples: integer,
  spanMs: number,
  series: arrayOf(object({ tMs: number, gpuPct: nullable(number), treeSmPct: nullable(number) })),
});

/** AttemptReport: one run of the program (the first, or a retry after an OOM). */
const attemptSchema = object({
  attempt: integer,
  argv: strings,
  batch: nullable(object({ batch: integer, accum: integer })),
  startedAtMs: integer,
  durationMs: integer,
  exit: childExitSchema,
  sampleHz: number,
  samples: integer,
  peaks: arrayOf(gpuPeakSchema),
  mismatches: arrayOf(object({ ...gpuRef, pid: integer, comm: nullableString, usedBytes: nullableInt, firstSeenMs: number })),
  ooms: arrayOf(oomFindingSchema),
  oomsNotKept: integer,
  cleanup: cleanupSchema,
  interruptedBy: nullableString,
  // Plugins by name; the companion's is typed, another plugin's is its own.
  plugins: { type: 'object', properties: { companion: companionReportSchema } },
  outputTail: string,
  timeline: arrayOf(object({ tMs: number, bytes: mapOf(integer) })),
  utilization: arrayOf(utilizationSchema),
  findings: arrayOf(runFindingSchema),
  appeared: arrayOf(object({ ...gpuRef, pid: integer, processName: nullableString, maxUsedBytes: nullableInt, firstSeenMs: number })),
  startError: string,
}, ['oomsNotKept', 'utilization', 'findings', 'appeared', 'startError']);

/** The fields of RunReport but its version. */
export const runReportFields: Record<string, JsonSchema> = {
  argv: strings,
  cwd: string,
  startedAtMs: integer,
  durationMs: integer,
  gpus: nullable(arrayOf(gpuRefSchema)),
  gpuReason: nullableString,
  env: arrayOf(object({ name: string, value: nullableString, previous: nullableString, action: oneOf(members<EnvDecision['action']>()(['set', 'merged', 'kept', 'unset'])), reason: string })),
  preflight: arrayOf(object({
    ...gpuRef,
    totalBytes: nullableInt,
    freeBytes: nullableInt,
    usedBytes: nullableInt,
    otherProcesses: arrayOf(object({ pid: integer, usedBytes: nullableInt, name: nullableString })),
  })),
  attempts: arrayOf(attemptSchema),
  retries: integer,
  retryNote: nullableString,
  exit: childExitSchema,
  peaks: arrayOf(gpuPeakSchema),
  startError: nullableString,
};
