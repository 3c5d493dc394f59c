/** The `steps` message: step timing, the DataLoader, copies, synchronising calls and GPU time per phase. */
import type { StepsMessage } from './messages.js';
import { bad, flagOrNull, count, countOrNull, duration, ms, obj, type Obj } from './parse-fields.js';

/** A `steps` message's DataLoader settings; null when absent. */
function loader(value: unknown): StepsMessage['loader'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.loader');
  return {
    numWorkers: countOrNull(o, 'numWorkers', '.loader'), pinMemory: flagOrNull(o, 'pinMemory', '.loader'),
    persistentWorkers: flagOrNull(o, 'persistentWorkers', '.loader'), prefetchFactor: countOrNull(o, 'prefetchFactor', '.loader'),
  };
}

function boundary(v: unknown): StepsMessage['boundary'] {
  if (v === null || v === undefined) return null;
  if (v !== 'dataloader' && v !== 'optimizer') bad('.boundary', 'expected "dataloader", "optimizer" or null');
  return v;
}

/** A `steps` message's copy totals; null when absent. */
function copies(value: unknown): StepsMessage['copies'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.copies');
  const c = {
    count: count(o, 'count', '.copies'), bytes: count(o, 'bytes', '.copies'), ms: ms(o, 'ms', '.copies'),
    blockingCount: count(o, 'blockingCount', '.copies'), blockingBytes: count(o, 'blockingBytes', '.copies'),
    blockingMs: ms(o, 'blockingMs', '.copies'), pageableBytes: count(o, 'pageableBytes', '.copies'),
  };
  if (c.blockingCount > c.count || c.blockingBytes > c.bytes || c.pageableBytes > c.bytes) bad('.copies', 'blocking or pageable figures exceed the totals');
  return c;
}

/** A `steps` message's CUDA-event phase totals; null when absent. */
function compute(value: unknown): StepsMessage['compute'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.compute');
  return {
    forwardMs: ms(o, 'forwardMs', '.compute'), forwardCount: count(o, 'forwardCount', '.compute'),
    backwardMs: ms(o, 'backwardMs', '.compute'), backwardCount: count(o, 'backwardCount', '.compute'),
    optimizerMs: ms(o, 'optimizerMs', '.compute'), optimizerCount: count(o, 'optimizerCount', '.compute'),
    everySteps: count(o, 'everySteps', '.compute'), dropped: count(o, 'dropped', '.compute'),
  };
}

/** A `steps` message's synchronising calls; null when absent. */
function syncs(value: unknown): StepsMessage['syncs'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.syncs');
  const kinds = obj(o.byKind, '.syncs.byKind');
  const byKind: Record<string, { count: number; ms: number }> = {};
  for (const [kind, v] of Object.entries(kinds)) {
    if (!/^[a-z][a-z_]{0,31}$/.test(kind)) bad('.syncs.byKind', `unexpected kind ${JSON.stringify(kind.slice(0, 40))}`);
    const k = obj(v, `.syncs.byKind.${kind}`);
    byKind[kind] = { count: count(k, 'count', `.syncs.byKind.${kind}`), ms: ms(k, 'ms', `.syncs.byKind.${kind}`) };
  }
  return { steps: count(o, 'steps', '.syncs'), byKind };
}

/** Reads a `steps` message's fields onto `base`. */
export function stepsMessage(base: Pick<StepsMessage, 'schemaVersion' | 'pid' | 'timeMs'>, o: Obj): StepsMessage {
  const type = 'steps';
  const dataWaitMs = duration(o, 'dataWaitMs');
  const stepMs = duration(o, 'stepMs');
  if (dataWaitMs > stepMs) bad('.dataWaitMs', 'is longer than stepMs');
  return {
    ...base, type, steps: count(o, 'steps', ''), dataWaitMs, stepMs, samples: count(o, 'samples', ''),
    batchSeen: countOrNull(o, 'batchSeen', ''), batchMin: countOrNull(o, 'batchMin', ''), batchMax: countOrNull(o, 'batchMax', ''),
    batchAsked: countOrNull(o, 'batchAsked', ''),
    // Fields newer companions add are kept only when sent, so a message reads back exactly as it was written.
    ...('loader' in o ? { loader: loader(o.loader) } : {}),
    ...('cpuCount' in o ? { cpuCount: countOrNull(o, 'cpuCount', '') } : {}),
    ...('tokens' in o ? { tokens: countOrNull(o, 'tokens', '') } : {}),
    ...('boundary' in o ? { boundary: boundary(o.boundary) } : {}),
    ...('copies' in o ? { copies: copies(o.copies) } : {}),
    ...('syncs' in o ? { syncs: syncs(o.syncs) } : {}),
    ...('compute' in o ? { compute: compute(o.compute) } : {}),
  };
}
