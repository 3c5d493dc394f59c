/**
 * The tracer's stand-ins for CUDA kernels, byte for byte, on a tiny program with real PyTorch (fake tensors):
 * CUDA's float32 autocast list, dropout's bool mask, and an older release's softmax input and in-place
 * zero_grad (--torch-version). The tracer is run directly (no CLI build needed); needs the .venv/ test environment.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StepTrace, TraceAlloc } from '../../../src/core/estimate/index.js';
import { traceDirect } from '../../helpers/trace-direct.js';

const ROOT = join(__dirname, '../../..');
const SCRIPT = join(ROOT, 'test/fixtures/estimate/trace/cuda_kernels.py');
const CHECKPOINTED = join(ROOT, 'test/fixtures/estimate/trace/checkpoint_dropout.py');

function trace(torchVersion: string | null, script = SCRIPT, args: string[] = []): Promise<StepTrace> {
  return traceDirect(script, args, torchVersion ? { GPUMEM_ESTIMATE_TORCH_VERSION: torchVersion } : {});
}

const allocs = (t: StepTrace, step: number): TraceAlloc[] => t.events.filter((e): e is TraceAlloc => e.kind === 'alloc' && e.step === step);

/** Index in the event list of the first allocation of `phase` in `step`, and of each free by id. */
function positions(t: StepTrace): { first: (step: number, phase: string) => number; freedAt: (id: number) => number } {
  return {
    first: (step, phase) => t.events.findIndex((e) => e.kind === 'alloc' && e.step === step && e.phase === phase),
    freedAt: (id) => t.events.findIndex((e) => e.kind === 'free' && e.id === id),
  };
}

describe('tracer stand-ins for CUDA kernels (real torch)', () => {
  let now: StepTrace;
  let old: StepTrace;
  // Traced once for the cases below, off the collection path (each is a real torch process).
  beforeAll(async () => {
    now = await trace(null);
    old = await trace('1.10');
  }, 300_000);
  const forward = (t: StepTrace) => allocs(t, 1).filter((a) => a.phase === 'forward');

  it('softmax under autocast gives float32 (8 × 256 × 4 bytes) as CUDA autocast does', async () => {
    const softmax = forward(now).filter((a) => a.op === '_softmax');
    expect(softmax.map((a) => [a.dtype, a.bytes])).toEqual([['float32', 8 * 256 * 4]]);
  });

  it('dropout keeps a one-byte bool mask and no float noise tensor', async () => {
    const f = forward(now);
    expect(f.filter((a) => a.op === 'native_dropout').map((a) => [a.dtype, a.bytes]).sort()).toEqual([['bool', 8 * 256], ['float32', 8 * 256 * 4]]);
    expect(f.some((a) => a.op === 'empty_like' || a.op === 'bernoulli')).toBe(false);
  });

  it('with torch 1.10 the softmax input lives until backward; with the installed release it is freed in forward', async () => {
    for (const [t, keptPastForward] of [[now, false], [old, true]] as const) {
      const p = positions(t);
      const h = forward(t).find((a) => a.op === 'addmm' && a.dtype === 'float16')!;
      expect(h.bytes).toBe(8 * 256 * 2);
      expect(p.freedAt(h.id) > p.first(1, 'backward')).toBe(keptPastForward);
    }
  });

  it('with torch 1.10 zero_grad() keeps the gradients (zeroed) into the next forward pass', async () => {
    for (const [t, kept] of [[now, false], [old, true]] as const) {
      const p = positions(t);
      const grads = t.events.find((e) => e.kind === 'tag' && e.category === 'gradients' && e.step === 0);
      expect(grads && grads.kind === 'tag' ? grads.ids.length : 0).toBe(2);
      const ids = grads && grads.kind === 'tag' ? grads.ids : [];
      for (const id of ids) {
        const freed = p.freedAt(id);
        expect(freed === -1 || freed > p.first(1, 'forward')).toBe(kept);
      }
    }
  });

  it.each([['non-reentrant', []], ['reentrant', ['--reentrant']]])(
    'checkpointing (%s) recomputes dropout as CUDA would: a bool mask again in backward, no float noise',
    async (_, args) => {
      // Autograd runs recomputation with no torch-function mode: the tracer puts its own back for it. Before, the
      // non-reentrant variant stopped with CheckpointError (float32 noise recomputed where a bool mask was saved).
      const t = await trace(null, CHECKPOINTED, args);
      expect(t.error).toBeNull();
      const step = allocs(t, 1);
      const masks = (phase: string): number[] =>
        step.filter((a) => a.phase === phase && a.op === 'native_dropout' && a.dtype === 'bool').map((a) => a.bytes);
      expect(masks('forward')).toEqual([8 * 256, 8 * 256, 8 * 256, 8 * 256]);
      expect(masks('backward')).toEqual([8 * 256, 8 * 256, 8 * 256, 8 * 256]);
      expect(step.some((a) => a.op === 'bernoulli' || a.op === 'bernoulli_' || (a.op === 'empty_like' && a.dtype === 'float32'))).toBe(false);
    },
  );
});
