/**
 * Finds out-of-memory errors in a child's output as it streams, through the explain parser's streaming
 * scanner (core/oom), so `gpumem run` recognises every family `gpumem explain` does and line numbers point
 * into the child's combined output. Events are explained (ranked causes) with the run's environment.
 */
import { createOomScanner } from '../core/oom/scanner.js';
import { explainOom } from '../core/oom/explain.js';
import type { OomEvent } from '../core/oom/types.js';
import type { OomFinding } from './report.js';

export interface OomWatcher {
  /** Feeds a chunk; returns the findings completed by it (none once `maxKept` were returned). */
  push(chunk: string): OomFinding[];
  /** Ends the output: flushes a message cut off at the end. */
  end(): OomFinding[];
  /** OOM messages found after the first `maxKept`: counted, neither explained nor kept. */
  notKept(): number;
}

/**
 * How many OOM findings of one attempt's output are kept, as the companion channel keeps 64 reports per
 * process: a program that prints OOM text in a loop must not grow gpumem's memory without bound.
 */
export const MAX_OUTPUT_OOMS_KEPT = 64;

/** Environment of the run that the cause rules use (allocator config, visible devices). */
export interface OomRunContext {
  allocConf?: string;
  cudaVisibleDevices?: string;
  /** The machine's GPUs, to name a UUID entry of CUDA_VISIBLE_DEVICES by its index. */
  gpus?: ReadonlyArray<{ index: number; uuid: string | null }>;
}

function toFinding(event: OomEvent, context: OomRunContext): OomFinding {
  const firstLine = event.message.split('\n')[0] ?? event.message;
  return { line: event.line, text: firstLine, event, causes: explainOom(event, context) };
}

/**
 * A streaming OOM detector over a child's combined stdout and stderr. `context` may be a function: it is
 * then asked at each finding (the child's own CUDA_VISIBLE_DEVICES is only known once it runs).
 */
export function createOomWatcher(context: OomRunContext | (() => OomRunContext) = {}, maxKept = MAX_OUTPUT_OOMS_KEPT): OomWatcher {
  const scanner = createOomScanner();
  const now = (): OomRunContext => (typeof context === 'function' ? context() : context);
  let kept = 0;
  let dropped = 0;
  const keep = (events: OomEvent[]): OomFinding[] => {
    const room = Math.max(0, maxKept - kept);
    dropped += Math.max(0, events.length - room);
    const chosen = events.slice(0, room);
    kept += chosen.length;
    return chosen.map((e) => toFinding(e, now()));
  };
  return {
    push: (chunk) => keep(scanner.push(chunk)),
    end: () => keep(scanner.end()),
    notKept: () => dropped,
  };
}
