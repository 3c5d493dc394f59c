import { describe, expect, it } from 'vitest';
import { checkpointingFix, insertFix, parseStepTrace, rankTracedFixes, rewriteTrace, type TracedFixKind } from '../../../src/core/estimate/index.js';
import { AllocatorSim } from '../../../src/core/allocator/index.js';
import { alloc, free, handStep, line } from './trace-lines.js';

const MiB = 1024 * 1024;
// Peak: optimizer, 20 MiB (see handStep).
const STEP = parseStepTrace(handStep());

describe('traced fixes', () => {
  const context = 100 * MiB;
  const fixes = rankTracedFixes(STEP, { workspaceBytes: 0, contextBytes: context, budgetBytes: context + 13 * MiB, shardGpus: 2, newAllocator: () => null });
  const by = (k: TracedFixKind): number => fixes.find((f) => f.kind === k)!.deviceBytes - context;

  it('rewrites each category as the fix changes it and replays the peak', () => {
    // 8-bit state: 2 Mi elements → 1 byte each + one fp32 absmax per 256 elements.
    expect(by('optimizer-8bit')).toBe(12 * MiB + 2 * MiB + (2 * MiB / 256) * 4);
    expect(by('optimizer-paged')).toBe(12 * MiB);
    // LoRA: no gradient, no state; the peak moves to the optimizer's temporary over the weights (4 + 4).
    expect(by('lora')).toBe(8 * MiB);
    expect(by('zero-1')).toBe(16 * MiB);
    expect(by('zero-2')).toBe(14 * MiB);
    expect(by('zero-3')).toBe(12 * MiB);
    // Autocast halves only forward/backward float32 activations; the optimizer peak is unchanged.
    expect(by('autocast-bf16')).toBe(20 * MiB);
    expect(by('expandable-segments')).toBe(20 * MiB);
  });

  it('ranks best first and judges each against the budget', () => {
    expect(fixes.map((f) => f.deviceBytes)).toEqual([...fixes.map((f) => f.deviceBytes)].sort((a, b) => a - b));
    expect(fixes[0]!.kind).toBe('lora');
    for (const f of fixes) expect(f.fits).toBe(f.deviceBytes <= context + 13 * MiB);
    expect(fixes.find((f) => f.kind === 'expandable-segments')!.basis).toBe('replayed');
  });

  it('a PyTorch release without expandable_segments is not offered that fix', () => {
    const old = rankTracedFixes(STEP, { workspaceBytes: 0, contextBytes: context, budgetBytes: 0, shardGpus: 2, newAllocator: () => null, expandableSegments: false });
    expect(old.some((f) => f.kind === 'expandable-segments')).toBe(false);
    expect(old.length).toBe(fixes.length - 1);
  });

  it('without more than one GPU there is no sharding fix; with the simulator the figures are reserved bytes', () => {
    const one = rankTracedFixes(STEP, { workspaceBytes: 0, contextBytes: 0, budgetBytes: 0, shardGpus: 1, newAllocator: () => new AllocatorSim() });
    expect(one.some((f) => f.kind.startsWith('zero'))).toBe(false);
    // Every request here is a multiple of 2 MiB above 1 MiB: the simulator reserves at least what is requested.
    expect(one.find((f) => f.kind === 'lora')!.deviceBytes).toBeGreaterThanOrEqual(8 * MiB);
  });

  it('dropping an allocation drops its free too', () => {
    const t = rewriteTrace(STEP, (a) => (a.id === 2 ? 0 : a.bytes));
    expect(t.events.some((e) => (e.kind === 'alloc' || e.kind === 'free') && e.id === 2)).toBe(false);
  });
});

describe('the activation-checkpointing fix (from a second trace)', () => {
  const withNotes = (notes: string[]) => parseStepTrace([line({ kind: 'header', schemaVersion: 1, torch: '2.15.0', steps: 1, stepsDone: 1 }), ...notes.map((text) => line({ kind: 'note', text })), line({ kind: 'end' })].join('\n'));
  it('is numbered from the checkpointed trace and judged against the budget', () => {
    const t = withNotes(['optimizer AdamW: foreach=True', 'activation checkpointing: torch.utils.checkpoint around each of 16 Bottleneck blocks']);
    const f = checkpointingFix(t, 900, 1000)!;
    expect(f).toEqual({ kind: 'activation-checkpointing', what: 'activation checkpointing (torch.utils.checkpoint around each of 16 Bottleneck blocks)', deviceBytes: 900, fits: true, basis: 'traced' });
    expect(checkpointingFix(t, 1001, 1000)!.fits).toBe(false);
  });
  it('is left out when the second trace checkpointed nothing new', () => {
    expect(checkpointingFix(withNotes(['activation checkpointing: the program already checkpoints LlamaForCausalLM']), 1, 10)).toBeNull();
    expect(checkpointingFix(withNotes(['activation checkpointing: MLP has no repeated blocks to checkpoint']), 1, 10)).toBeNull();
    expect(checkpointingFix(withNotes([]), 1, 10)).toBeNull();
  });
  it('takes its place among the other fixes by device bytes', () => {
    const mk = (kind: TracedFixKind, deviceBytes: number) => ({ kind, what: kind, deviceBytes, fits: false, basis: 'derived' as const });
    const ranked = insertFix([mk('lora', 10), mk('zero-1', 30)], { ...mk('activation-checkpointing', 20), basis: 'traced' });
    expect(ranked.map((f) => f.kind)).toEqual(['lora', 'activation-checkpointing', 'zero-1']);
    expect(insertFix([mk('lora', 10)], null).map((f) => f.kind)).toEqual(['lora']);
  });
});
