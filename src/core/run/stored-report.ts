/**
 * A run report read back from the history: the one type every view of a stored run reads (`runs show`, the
 * server's run pages and API). Stored reports come from older and newer gpumem versions, hand edits and
 * damaged disks, so the reader is tolerant: every field is checked where it is read, a field that is
 * missing is null (never 0), a field of the wrong type is null too and its place is listed in `damage`,
 * and fields this version does not know are kept in `document` untouched. Nothing here throws on data.
 */
import type { CompanionDrops } from '../companion/intake.js';
import type { PytorchGpuSummary } from '../companion/summary.js';
import type { RankSummary } from '../companion/ranks.js';
import type { SnapshotOomAnswer } from '../allocator/oom-answer.js';
import type { AllocatorAtOom } from '../companion/oom-event.js';
import type { SplitPoint } from '../companion/report.js';
import { validStepSummary, type StepSummary } from '../companion/steps.js';
import { RUN_SCHEMA_VERSION } from './report.js';
import { anything, count, figure, flag, isObject, kindOfJson, list, nullable, oneOf, optional, record, shape, text, whole, withinDepth, type Check } from './shape.js';

/**
 * Version of the stored report: the run report's own schema (the history stores the run's --json report);
 * reports stored without the field were written as version 1.
 */
export const STORED_REPORT_VERSION = RUN_SCHEMA_VERSION;
/** Stored reports nest about 8 deep; a deeper one is damaged, and could not be written back as JSON. */
export const MAX_STORED_REPORT_DEPTH = 64;

/** One GPU's PyTorch summary as read back: every figure the companion wrote, each null where it could not be read. */
export type StoredGpuSplit = { [K in keyof PytorchGpuSummary]: K extends 'pids' ? number[] : PytorchGpuSummary[K] | null };

/** The allocator at a caught OOM; pid and device are null when a stored report lacks them. */
export type StoredAllocatorAtOom = Omit<AllocatorAtOom, 'pid' | 'device'> & { pid: number | null; device: number | null };

/** The companion's part of an attempt, as the views read it (a live CompanionReport has this shape too). */
export interface StoredCompanion {
  gpus: StoredGpuSplit[];
  unprintedOoms: StoredAllocatorAtOom[];
  snapshots: string[];
  snapshotAnswers?: SnapshotOomAnswer[];
  splitTimeline?: SplitPoint[];
  processes: Array<{ pid: number; steps?: StepSummary | null; ooms: readonly unknown[]; oomsNotKept: number; companionErrors: Record<string, string>; noCuda?: string | null }>;
  /** Lines from the channel that could not be read (reports before the limits existed have none). */
  problems?: string[];
  /** What the channel sent that was not kept; null when everything was kept or the report predates the limits. */
  notKept?: (CompanionDrops & { problemLines: number }) | null;
  /** One line per rank of a distributed job (absent before ranks were reported). */
  ranks?: RankSummary[];
}

export interface StoredAttempt {
  attempt: number;
  batch: { batch: number; accum: number } | null;
  durationMs: number | null;
  exit: { code: number | null; signal: string | null } | null;
  peaks: Array<{ index: number | null; uuid: string | null; peakBytes: number | null; atMs: number | null; chosen: boolean }>;
  /** `event` and `causes` are passed on as stored (the JSON API shows them; no view reads into them). */
  ooms: Array<{ line: number | null; text: string; event: unknown; causes: unknown }>;
  cleanup: { leftovers: Array<{ pid: number | null; outcome: string; gpuBytes: number | null }>; heldByNothing: Array<{ index: number | null; bytes: number }>; memoryReleased: boolean | null } | null;
  timeline: Array<{ tMs: number; bytes: Record<string, number> }>;
  plugins: { companion: StoredCompanion | null };
}

export interface StoredRunReport {
  schemaVersion: number;
  env: Array<{ name: string; value: string | null; action: string }>;
  attempts: StoredAttempt[];
  startError: string | null;
  /** Places that could not be read ("attempts[0].exit is a string, not an object"); empty for an intact report. */
  damage: string[];
  /** The stored document as written, unknown fields included (for --json and the API); null when unreadable. */
  document: unknown;
}

/** Reads one field and records why it was dropped; a missing field (undefined or null) is null without damage. */
class Reader {
  constructor(readonly damage: string[]) {}

  field<T>(o: Record<string, unknown>, key: string, path: string, check: Check, fallback: T): T {
    const v = Object.hasOwn(o, key) ? o[key] : undefined;
    if (v === undefined || v === null) return fallback;
    const problem = check(v, `${path}.${key}`);
    if (problem === null) return v as T;
    this.damage.push(problem);
    return fallback;
  }

  /** The items of a list that pass `check`; each other item is one damage line. */
  items<T>(o: Record<string, unknown>, key: string, path: string, check: Check): T[] {
    const v = this.field<unknown[]>(o, key, path, list(anything), []);
    return v.filter((item, i) => {
      const problem = check(item, `${path}.${key}[${i}]`);
      if (problem !== null) this.damage.push(problem);
      return problem === null;
    }) as T[];
  }
}

const num = nullable(figure);
const GPU_FIELDS = ['treeBytes', 'processUsedBytes', 'allocatedBytes', 'reservedBytes', 'unallocatedBytes', 'nonPytorchBytes', 'otherProcessesBytes', 'peakAllocatedBytes', 'peakReservedBytes', 'numAllocRetries', 'numOoms'] as const;
const GPU = shape({ gpuUuid: optional(nullable(text)), gpuIndex: optional(nullable(whole)), pids: optional(list(count)), atMs: optional(num), ...Object.fromEntries(GPU_FIELDS.map((k) => [k, optional(num)])) });
const AT_OOM = shape({
  pid: optional(nullable(count)), device: optional(nullable(count)), gpuUuid: optional(nullable(text)), source: optional(oneOf('observer', 'counter')),
  ...Object.fromEntries(['requestedBytes', 'allocatedBytes', 'reservedBytes', 'unallocatedBytes', 'deviceLimitBytes', 'deviceFreeBytes', 'numAllocRetries'].map((k) => [k, optional(num)])),
  snapshotPath: optional(nullable(text)),
});
const SETTINGS_ANSWER = shape({ settings: text, oomAvoided: flag, oomSpareBytes: num, firstOomEventIndex: num });
const SNAPSHOT_ANSWER = shape({ file: text, problem: nullable(text), devices: list(shape({ device: count, coversWholeRun: flag, recorded: SETTINGS_ANSWER, whatIf: SETTINGS_ANSWER })) });
const SPLIT_POINT = shape({ tMs: figure, allocatedBytes: record(figure), reservedBytes: record(figure) });
const PROCESS = shape({ pid: count, oomsNotKept: optional(count), ooms: optional(list(anything)), companionErrors: optional(record(text)), noCuda: optional(nullable(text)) });

/**
 * A process's step summary: as this gpumem writes it, or an older companion's (fewer figures, each missing
 * one null); anything without a whole `steps` count is damage.
 */
function readSteps(r: Reader, v: unknown, path: string): StepSummary | null {
  if (v === undefined || v === null) return null;
  if (validStepSummary(v)) return v;
  if (!isObject(v) || count(v.steps, `${path}.steps`) !== null) {
    r.damage.push(`${path} is not a step summary this gpumem reads`);
    return null;
  }
  const f = (k: string): number | null => (typeof v[k] === 'number' && Number.isFinite(v[k]) && (v[k] as number) >= 0 ? (v[k] as number) : null);
  return {
    steps: v.steps as number, meanStepMs: f('meanStepMs'), meanDataWaitMs: f('meanDataWaitMs'), dataWaitShare: f('dataWaitShare'), samplesPerSec: f('samplesPerSec'),
    tokensPerSec: f('tokensPerSec'), batchSeen: f('batchSeen'), batchMin: f('batchMin'), batchMax: f('batchMax'), batchAsked: f('batchAsked'),
    boundary: v.boundary === 'optimizer' || v.boundary === 'dataloader' ? v.boundary : null,
  };
}

function readCompanion(r: Reader, c: Record<string, unknown>, path: string): StoredCompanion {
  const gpus = r.items<Record<string, unknown>>(c, 'gpus', path, GPU).map((g): StoredGpuSplit => {
    const n = (k: string): number | null => (typeof g[k] === 'number' ? (g[k] as number) : null);
    return {
      gpuUuid: typeof g.gpuUuid === 'string' ? g.gpuUuid : null, gpuIndex: n('gpuIndex'), pids: Array.isArray(g.pids) ? (g.pids as number[]) : [],
      atMs: n('atMs'), treeBytes: n('treeBytes'), processUsedBytes: n('processUsedBytes'),
      allocatedBytes: n('allocatedBytes'), reservedBytes: n('reservedBytes'), unallocatedBytes: n('unallocatedBytes'), nonPytorchBytes: n('nonPytorchBytes'),
      otherProcessesBytes: n('otherProcessesBytes'),
      // The per-process name (maxPeak…) is accepted too: some reports carry the peaks under it.
      peakAllocatedBytes: n('peakAllocatedBytes') ?? n('maxPeakAllocatedBytes'), peakReservedBytes: n('peakReservedBytes') ?? n('maxPeakReservedBytes'),
      numAllocRetries: n('numAllocRetries'), numOoms: n('numOoms'),
    };
  });
  const unprintedOoms = r.items<Record<string, unknown>>(c, 'unprintedOoms', path, AT_OOM).map((o): StoredAllocatorAtOom => {
    const n = (k: string): number | null => (typeof o[k] === 'number' ? (o[k] as number) : null);
    return {
      pid: n('pid'), device: n('device'), gpuUuid: typeof o.gpuUuid === 'string' ? o.gpuUuid : null, source: o.source === 'counter' ? 'counter' : 'observer',
      requestedBytes: n('requestedBytes'), allocatedBytes: n('allocatedBytes'), reservedBytes: n('reservedBytes'), unallocatedBytes: n('unallocatedBytes'),
      deviceLimitBytes: n('deviceLimitBytes'), deviceFreeBytes: n('deviceFreeBytes'), numAllocRetries: n('numAllocRetries'),
      snapshotPath: typeof o.snapshotPath === 'string' ? o.snapshotPath : null,
    };
  });
  const processes = r.items<Record<string, unknown>>(c, 'processes', path, PROCESS).map((p, i) => ({
    pid: p.pid as number,
    steps: readSteps(r, p.steps, `${path}.processes[${i}].steps`),
    ooms: Array.isArray(p.ooms) ? p.ooms : [],
    oomsNotKept: typeof p.oomsNotKept === 'number' ? p.oomsNotKept : 0,
    companionErrors: isObject(p.companionErrors) ? (p.companionErrors as Record<string, string>) : {},
    noCuda: typeof p.noCuda === 'string' ? p.noCuda : null,
  }));
  return {
    gpus, unprintedOoms, processes,
    snapshots: r.items<string>(c, 'snapshots', path, text),
    snapshotAnswers: r.items<SnapshotOomAnswer>(c, 'snapshotAnswers', path, SNAPSHOT_ANSWER),
    splitTimeline: r.items<SplitPoint>(c, 'splitTimeline', path, SPLIT_POINT),
    problems: r.items<string>(c, 'problems', path, text),
    notKept: readNotKept(c.notKept),
    ranks: readRanks(r, c.ranks, `${path}.ranks`),
  };
}

/** The per-rank lines; an entry that is not one (no whole pid, wrong types) is left out and named. */
function readRanks(r: Reader, v: unknown, path: string): RankSummary[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.damage.push(`${path} is not a list`);
    return [];
  }
  const out: RankSummary[] = [];
  v.forEach((item: unknown, i) => {
    const o = isObject(item) ? (item as Record<string, unknown>) : null;
    if (o === null || !Number.isSafeInteger(o.pid)) {
      r.damage.push(`${path}[${i}] is not a rank line`);
      return;
    }
    const n = (k: string): number | null => (typeof o[k] === 'number' && Number.isFinite(o[k]) ? (o[k] as number) : null);
    const gpus = Array.isArray(o.gpus) ? o.gpus.filter((g): g is { gpuUuid: string; gpuIndex: number | null } => isObject(g) && typeof (g as Record<string, unknown>).gpuUuid === 'string')
      .map((g) => ({ gpuUuid: g.gpuUuid, gpuIndex: typeof g.gpuIndex === 'number' ? g.gpuIndex : null })) : [];
    out.push({
      pid: o.pid as number, rank: n('rank'), localRank: n('localRank'), worldSize: n('worldSize'),
      backend: typeof o.backend === 'string' ? o.backend : null, rankSource: o.rankSource === 'torch.distributed' ? 'torch.distributed' : 'env',
      gpus, peakAllocatedBytes: n('peakAllocatedBytes'), peakReservedBytes: n('peakReservedBytes'), peakProcessBytes: n('peakProcessBytes'),
      peakNonPytorchBytes: n('peakNonPytorchBytes'), steps: n('steps'), meanStepMs: n('meanStepMs'), meanDataWaitMs: n('meanDataWaitMs'),
      firstOomTimeMs: n('firstOomTimeMs'), oomDevice: n('oomDevice'), ended: o.ended === true,
    });
  });
  return out;
}

/** The companion's `notKept` counters, each a count or 0; anything else is no counters at all. */
function readNotKept(v: unknown): (CompanionDrops & { problemLines: number }) | null {
  if (!isObject(v)) return null;
  const o = v as Record<string, unknown>;
  const n = (k: string): number => (typeof o[k] === 'number' && Number.isFinite(o[k]) && (o[k] as number) >= 0 ? (o[k] as number) : 0);
  const overKindLimit: Record<string, number> = {};
  if (isObject(o.overKindLimit)) {
    for (const [kind, count] of Object.entries(o.overKindLimit as Record<string, unknown>)) {
      if (typeof count === 'number' && Number.isFinite(count) && count >= 0) overKindLimit[kind] = count;
    }
  }
  return { notInRun: n('notInRun'), overKindLimit, overTotalBytes: n('overTotalBytes'), textsCut: n('textsCut'), problemLines: n('problemLines') };
}

const PEAK = shape({ index: optional(nullable(whole)), uuid: optional(nullable(text)), peakBytes: optional(num), atMs: optional(num), chosen: optional(flag) });
const OOM = shape({ line: optional(nullable(count)), text: text });
const LEFTOVER = shape({ pid: optional(nullable(count)), outcome: text, gpuBytes: optional(num) });
const HELD = shape({ index: optional(nullable(whole)), bytes: figure });
const TIMELINE_POINT = shape({ tMs: figure, bytes: record(figure) });
const EXIT = shape({ code: optional(nullable(whole)), signal: optional(nullable(text)) });
const BATCH = shape({ batch: count, accum: count });
const ENV = shape({ name: text, value: optional(nullable(text)), action: text });

function readAttempt(r: Reader, a: Record<string, unknown>, path: string, index: number): StoredAttempt {
  const exit = r.field<Record<string, unknown> | null>(a, 'exit', path, EXIT, null);
  const cleanup = r.field<Record<string, unknown> | null>(a, 'cleanup', path, shape({}), null);
  const plugins = r.field<Record<string, unknown> | null>(a, 'plugins', path, shape({}), null);
  const companion = plugins ? r.field<Record<string, unknown> | null>(plugins, 'companion', `${path}.plugins`, shape({}), null) : null;
  return {
    attempt: r.field<number>(a, 'attempt', path, count, index + 1),
    batch: r.field<StoredAttempt['batch']>(a, 'batch', path, BATCH, null),
    durationMs: r.field<number | null>(a, 'durationMs', path, figure, null),
    exit: exit ? { code: typeof exit.code === 'number' ? exit.code : null, signal: typeof exit.signal === 'string' ? exit.signal : null } : null,
    peaks: r.items<Record<string, unknown>>(a, 'peaks', path, PEAK).map((p) => ({
      index: typeof p.index === 'number' ? p.index : null, uuid: typeof p.uuid === 'string' ? p.uuid : null,
      peakBytes: typeof p.peakBytes === 'number' ? p.peakBytes : null, atMs: typeof p.atMs === 'number' ? p.atMs : null, chosen: p.chosen !== false,
    })),
    ooms: r.items<Record<string, unknown>>(a, 'ooms', path, OOM).map((o) => ({
      line: typeof o.line === 'number' ? o.line : null, text: o.text as string, event: o.event ?? null, causes: o.causes ?? null,
    })),
    cleanup: cleanup
      ? {
        leftovers: r.items<Record<string, unknown>>(cleanup, 'leftovers', `${path}.cleanup`, LEFTOVER).map((l) => ({ pid: typeof l.pid === 'number' ? l.pid : null, outcome: l.outcome as string, gpuBytes: typeof l.gpuBytes === 'number' ? l.gpuBytes : null })),
        heldByNothing: r.items<Record<string, unknown>>(cleanup, 'heldByNothing', `${path}.cleanup`, HELD).map((h) => ({ index: typeof h.index === 'number' ? h.index : null, bytes: h.bytes as number })),
        memoryReleased: r.field<boolean | null>(cleanup, 'memoryReleased', `${path}.cleanup`, flag, null),
      }
      : null,
    timeline: r.items(a, 'timeline', path, TIMELINE_POINT),
    plugins: { companion: companion ? readCompanion(r, companion, `${path}.plugins.companion`) : null },
  };
}

/** The report of nothing: what a view shows for a report that could not be read at all. */
function unreadable(reason: string): StoredRunReport {
  return { schemaVersion: STORED_REPORT_VERSION, env: [], attempts: [], startError: null, damage: [reason], document: null };
}

/**
 * Reads a stored report (the history's report_json text). Never throws: a report that is not JSON, not an
 * object or nested deeper than MAX_STORED_REPORT_DEPTH is a report with no attempts whose `damage` says why;
 * a newer version is read as far as its fields are known, with a damage line naming the version.
 */
export function parseStoredRunReport(json: string): StoredRunReport {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return unreadable('the report is not JSON');
  }
  if (!isObject(value)) return unreadable(`the report is ${kindOfJson(value)}, not an object`);
  if (!withinDepth(value, MAX_STORED_REPORT_DEPTH)) return unreadable(`the report nests deeper than ${MAX_STORED_REPORT_DEPTH} levels`);
  const damage: string[] = [];
  const r = new Reader(damage);
  const version = r.field<number>(value, 'schemaVersion', 'report', count, STORED_REPORT_VERSION);
  if (version > STORED_REPORT_VERSION) damage.push(`the report was written by a newer gpumem (version ${version}); fields this version does not know are left out`);
  const attempts = r.field<unknown[]>(value, 'attempts', 'report', list(anything), []).flatMap((a, i) => {
    if (isObject(a)) return [readAttempt(r, a, `report.attempts[${i}]`, i)];
    damage.push(`report.attempts[${i}] is ${kindOfJson(a)}, not an object`);
    return [];
  });
  return {
    schemaVersion: version,
    env: r.items<Record<string, unknown>>(value, 'env', 'report', ENV).map((e) => ({ name: e.name as string, value: typeof e.value === 'string' ? e.value : null, action: e.action as string })),
    attempts,
    startError: r.field<string | null>(value, 'startError', 'report', text, null),
    damage,
    document: value,
  };
}

/** Snapshot files the report's attempts name, in order, without repeats. */
export function storedSnapshotFiles(report: StoredRunReport | null): string[] {
  return [...new Set((report?.attempts ?? []).flatMap((a) => a.plugins.companion?.snapshots ?? []))];
}
