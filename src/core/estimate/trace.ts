/**
 * The trace file the Python tracer writes (python/gpumem_torch/trace, format in docs/estimate.md): one JSON
 * object per line — a header, alloc/free/tag events for GPU storages in program order, notes, and an end line
 * that carries the error when the traced program never completed its steps.
 */
import { GpumemError } from '../errors.js';
import { formatBytes } from '../units.js';

export const TRACE_SCHEMA_VERSION = 1;

export type TracePhase = 'forward' | 'backward' | 'optimizer' | 'other';
export type TaggedCategory = 'weights' | 'gradients' | 'optimizer-state';

export interface TraceAlloc {
  kind: 'alloc';
  id: number;
  bytes: number;
  dtype: string;
  op: string;
  module: string | null;
  phase: TracePhase;
  step: number;
  frame: string | null;
}
export interface TraceFree {
  kind: 'free';
  id: number;
}
export interface TraceTag {
  kind: 'tag';
  category: TaggedCategory;
  step: number;
  ids: number[];
}
export type TraceEvent = TraceAlloc | TraceFree | TraceTag;

export interface StepTrace {
  torchVersion: string | null;
  stepsAsked: number;
  stepsDone: number;
  events: TraceEvent[];
  notes: string[];
  /** Why the traced program stopped early, or null when it ran every step. */
  error: string | null;
}

const PHASES: ReadonlySet<string> = new Set(['forward', 'backward', 'optimizer', 'other']);
const CATEGORIES: ReadonlySet<string> = new Set(['weights', 'gradients', 'optimizer-state']);

function bad(line: number, what: string): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `trace line ${line}: ${what}`, {
    hint: 'the trace is written by gpumem estimate -- CMD; run it again',
  });
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function parseEvent(o: Record<string, unknown>, line: number): TraceEvent | null {
  switch (o.kind) {
    case 'alloc':
      // The tracer fails such a request as CUDA would; a trace from elsewhere still gets the size named.
      if (typeof o.bytes === 'number' && o.bytes > Number.MAX_SAFE_INTEGER) {
        throw new GpumemError('INPUT_MALFORMED', `trace line ${line}: an allocation of ${formatBytes(o.bytes)} is too large to be real (no GPU has that much memory)`, {
          hint: 'check the sizes the program asks for; the tracer fails any single allocation over 4 TiB as a GPU would',
        });
      }
      if (!isCount(o.id) || !isCount(o.bytes)) throw bad(line, 'alloc needs whole-number id and bytes');
      if (typeof o.phase !== 'string' || !PHASES.has(o.phase)) throw bad(line, 'alloc has no known phase');
      return {
        kind: 'alloc', id: o.id, bytes: o.bytes, dtype: text(o.dtype) ?? '?', op: text(o.op) ?? '?',
        module: text(o.module), phase: o.phase as TracePhase, step: isCount(o.step) ? o.step : 0, frame: text(o.frame),
      };
    case 'free':
      if (!isCount(o.id)) throw bad(line, 'free needs a whole-number id');
      return { kind: 'free', id: o.id };
    case 'tag':
      if (typeof o.category !== 'string' || !CATEGORIES.has(o.category) || !Array.isArray(o.ids) || !o.ids.every(isCount)) {
        throw bad(line, 'tag needs a known category and a list of ids');
      }
      return { kind: 'tag', category: o.category as TaggedCategory, step: isCount(o.step) ? o.step : 0, ids: o.ids as number[] };
    default:
      return null;
  }
}

/** Parses a trace file's text; unknown event kinds are ignored, a malformed known one is an error. */
export function parseStepTrace(body: string): StepTrace {
  const trace: StepTrace = { torchVersion: null, stepsAsked: 0, stepsDone: 0, events: [], notes: [], error: null };
  let sawHeader = false;
  let sawEnd = false;
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch {
      throw bad(i + 1, 'not JSON');
    }
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw bad(i + 1, 'not a JSON object');
    const rec = o as Record<string, unknown>;
    if (rec.kind === 'header') {
      if (rec.schemaVersion !== TRACE_SCHEMA_VERSION) throw bad(i + 1, `schemaVersion ${String(rec.schemaVersion)} is not ${TRACE_SCHEMA_VERSION}`);
      sawHeader = true;
      trace.torchVersion = text(rec.torch);
      trace.stepsAsked = isCount(rec.steps) ? rec.steps : 0;
      trace.stepsDone = isCount(rec.stepsDone) ? rec.stepsDone : 0;
    } else if (rec.kind === 'note') {
      const t = text(rec.text);
      if (t !== null) trace.notes.push(t);
    } else if (rec.kind === 'end') {
      sawEnd = true;
      trace.error = text(rec.error);
    } else {
      const ev = parseEvent(rec, i + 1);
      if (ev) trace.events.push(ev);
    }
  }
  if (!sawHeader) throw bad(1, 'no header line');
  if (!sawEnd) throw bad(lines.length, 'the trace ends without its end line (the program was cut off)');
  return trace;
}
