/**
 * What would make a traced step fit: each fix rewrites the traced allocations the way the fix changes them
 * and replays the result through a fresh caching-allocator model, so every number is a replayed peak, not a
 * sum. Fixes that change the computation (bf16 autocast) are derived from the trace's categories rather than
 * re-traced, and say so. Sources of the byte rules:
 * - 8-bit optimizers (bitsandbytes): each state element 1 byte plus one fp32 absmax per 256-element block;
 *   tensors under 4096 elements keep 32-bit state (bitsandbytes' `min_8bit_size`).
 * - Paged optimizers (bitsandbytes): state lives in CUDA unified memory that the driver pages out to the host
 *   under pressure, so at best none of it stays on the GPU (a lower bound).
 * - LoRA: the base weights are frozen, so their gradients and optimizer state disappear; the adapters' own
 *   (rank × width, small) are not added back, so the figure is slightly low.
 * - ZeRO-1/2/3 and FSDP full sharding over N GPUs: optimizer state, then gradients, then weights divided by N;
 *   the all-gather buffers of ZeRO-3/FSDP (one layer's full weights at a time) are not added.
 * - bf16 autocast: float32 activations and temporaries of forward and backward halve; weights, gradients and
 *   state stay float32 (autocast keeps master weights), and so do the ops autocast runs in float32
 *   (softmax, norms, loss), so the figure is a lower bound for those.
 * - `expandable_segments:True`: the unchanged trace replayed with that allocator setting.
 * - Activation checkpointing changes what the program computes and keeps, so it is not derived here: the
 *   program is traced again with checkpointing applied (see {@link checkpointingFix}).
 */
import type { AllocatorModel } from './replay.js';
import { replayStepTrace } from './replay.js';
import type { StepTrace, TraceAlloc, TaggedCategory, TraceEvent } from './trace.js';

export type TracedFixKind = 'activation-checkpointing' | 'expandable-segments' | 'optimizer-8bit' | 'optimizer-paged' | 'lora' | 'zero-1' | 'zero-2' | 'zero-3' | 'autocast-bf16';

export interface TracedFix {
  kind: TracedFixKind;
  /** What to change, in the user's terms. */
  what: string;
  /** Replayed device bytes (reserved + context) with the fix. */
  deviceBytes: number;
  fits: boolean;
  /**
   * 'replayed' when the trace itself is replayed with new settings; 'derived' when allocations are rewritten;
   * 'traced' when the program was traced again with the fix applied.
   */
  basis: 'replayed' | 'derived' | 'traced';
}

export interface TracedFixInputs {
  workspaceBytes: number;
  contextBytes: number;
  budgetBytes: number;
  /** GPUs to shard over (ZeRO/FSDP); 1 leaves sharding out. */
  shardGpus: number;
  /** A fresh allocator model; `expandable` asks for `expandable_segments:True` on top of the run's settings. */
  newAllocator: (expandable: boolean) => AllocatorModel | null;
  /** False when the run's PyTorch release has no `expandable_segments` (before 2.1): that fix is not offered. */
  expandableSegments?: boolean;
}

const BNB_BLOCK = 256;
const BNB_MIN_8BIT_ELEMENTS = 4096;

/** The trace with each allocation's bytes replaced by `resize` (same order, same ids; 0 bytes drops it). */
export function rewriteTrace(trace: StepTrace, resize: (a: TraceAlloc, category: TaggedCategory | null) => number): StepTrace {
  const tagged = new Map<number, TaggedCategory>();
  for (const ev of trace.events) if (ev.kind === 'tag') for (const id of ev.ids) tagged.set(id, ev.category);
  const dropped = new Set<number>();
  const events = trace.events.flatMap((ev): TraceEvent[] => {
    if (ev.kind === 'alloc') {
      const bytes = resize(ev, tagged.get(ev.id) ?? null);
      if (bytes <= 0) {
        dropped.add(ev.id);
        return [];
      }
      return [{ ...ev, bytes }];
    }
    if (ev.kind === 'free' && dropped.has(ev.id)) return [];
    return [ev];
  });
  return { ...trace, events };
}

function stateBytes8bit(a: TraceAlloc): number {
  if (a.dtype !== 'float32') return a.bytes;
  const elements = a.bytes / 4;
  if (elements < BNB_MIN_8BIT_ELEMENTS) return a.bytes;
  return elements + Math.ceil(elements / BNB_BLOCK) * 4;
}

/** Every fix the trace lets us number, best (smallest device bytes) first. */
export function rankTracedFixes(trace: StepTrace, inputs: TracedFixInputs): TracedFix[] {
  const n = Math.max(1, inputs.shardGpus);
  const shard = (bytes: number): number => Math.ceil(bytes / n);
  const device = (t: StepTrace, expandable: boolean): number => {
    const r = replayStepTrace(t, { workspaceBytes: inputs.workspaceBytes }, inputs.newAllocator(expandable));
    return (r.allocator?.peakReservedBytes ?? r.peakRequestedBytes) + inputs.contextBytes;
  };
  const candidates: Array<Omit<TracedFix, 'deviceBytes' | 'fits'> & { trace: StepTrace; expandable: boolean }> = [
    ...(inputs.expandableSegments === false ? [] : [{ kind: 'expandable-segments' as const, what: 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True', basis: 'replayed' as const, trace, expandable: true }]),
    { kind: 'optimizer-8bit', what: '8-bit optimizer state (bitsandbytes Adam8bit / AdamW8bit)', basis: 'derived', expandable: false,
      trace: rewriteTrace(trace, (a, c) => (c === 'optimizer-state' ? stateBytes8bit(a) : a.bytes)) },
    { kind: 'optimizer-paged', what: 'paged optimizer (bitsandbytes PagedAdamW): state paged out to host memory at best', basis: 'derived', expandable: false,
      trace: rewriteTrace(trace, (a, c) => (c === 'optimizer-state' ? 0 : a.bytes)) },
    { kind: 'lora', what: 'LoRA (frozen base weights: no gradients or optimizer state for them)', basis: 'derived', expandable: false,
      trace: rewriteTrace(trace, (a, c) => (c === 'optimizer-state' || c === 'gradients' ? 0 : a.bytes)) },
    { kind: 'autocast-bf16', what: 'bf16 autocast (torch.autocast("cuda", dtype=torch.bfloat16))', basis: 'derived', expandable: false,
      trace: rewriteTrace(trace, (a, c) => (c === null && a.dtype === 'float32' && (a.phase === 'forward' || a.phase === 'backward') ? Math.ceil(a.bytes / 2) : a.bytes)) },
  ];
  if (n > 1) {
    candidates.push(
      { kind: 'zero-1', what: `ZeRO-1 over ${n} GPUs (optimizer state sharded)`, basis: 'derived', expandable: false,
        trace: rewriteTrace(trace, (a, c) => (c === 'optimizer-state' ? shard(a.bytes) : a.bytes)) },
      { kind: 'zero-2', what: `ZeRO-2 over ${n} GPUs (optimizer state and gradients sharded)`, basis: 'derived', expandable: false,
        trace: rewriteTrace(trace, (a, c) => (c === 'optimizer-state' || c === 'gradients' ? shard(a.bytes) : a.bytes)) },
      { kind: 'zero-3', what: `ZeRO-3 / FSDP full shard over ${n} GPUs (weights too; gather buffers not counted)`, basis: 'derived', expandable: false,
        trace: rewriteTrace(trace, (a, c) => (c !== null ? shard(a.bytes) : a.bytes)) },
    );
  }
  return candidates
    .map(({ trace: t, expandable, ...rest }) => {
      const deviceBytes = device(t, expandable);
      return { ...rest, deviceBytes, fits: deviceBytes <= inputs.budgetBytes };
    })
    .sort((x, y) => x.deviceBytes - y.deviceBytes);
}

const CHECKPOINT_NOTE = /^activation checkpointing: (.*)$/;

/**
 * The activation-checkpointing fix from a second trace of the program run with checkpointing applied by the
 * tracer, or null when that trace says it checkpointed nothing new (no repeated blocks, or the program already
 * checkpoints). `deviceBytes` is that trace's replayed peak plus the context, like every other fix.
 */
export function checkpointingFix(checkpointed: StepTrace, deviceBytes: number, budgetBytes: number): TracedFix | null {
  const how = checkpointed.notes.map((n) => CHECKPOINT_NOTE.exec(n)?.[1]).find((h) => h !== undefined);
  if (how === undefined || /^the program already|has no repeated blocks/.test(how)) return null;
  return { kind: 'activation-checkpointing', what: `activation checkpointing (${how})`, deviceBytes, fits: deviceBytes <= budgetBytes, basis: 'traced' };
}

/** `fixes` with `extra` added in its place by device bytes (best first); unchanged when `extra` is null. */
export function insertFix(fixes: readonly TracedFix[], extra: TracedFix | null): TracedFix[] {
  return extra === null ? [...fixes] : [...fixes, extra].sort((x, y) => x.deviceBytes - y.deviceBytes);
}
