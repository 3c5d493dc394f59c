/**
 * Copies and synchronising calls under `gpumem run` with no change to the program (fake torch whose blocking
 * host-to-device copies take a known 1 ms per MiB, fake NVML, real processes): a loop copying 8 MiB pageable
 * batches and calling `.item()` every step gets the blocking-copy and sync-calls findings with exact byte
 * figures; the same loop with pinned batches, `non_blocking=True` and an `.item()` every fourth step gets neither.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MiB } from '../../../src/core/units.js';
import { companionSetup, gpumem } from '../helpers/companion-e2e.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Steps {
  steps: number;
  copies: { countPerStep: number; bytesPerStep: number; blockingBytesPerStep: number; pageableBytesPerStep: number; blockingShare: number };
  syncs: { stepShare: number; byKind: Record<string, number> } | null;
}
interface Report { attempts: Array<{ findings: Array<{ id: string; title: string; fix: string }>; plugins: { companion: { processes: Array<{ steps: Steps | null }> } } }> }

function loop(pinned: boolean, itemEvery: number): string {
  return [
    'import time, torch',
    'weights = torch.empty(1 << 20).to("cuda")  # before the first batch: not a step\'s copy',
    'def batches():',
    '    for _ in range(21):',
    `        x = torch.empty(32, 65536)  # 8 MiB of float32`,
    `        yield ${pinned ? 'x.pin_memory()' : 'x'}`,
    'for i, x in enumerate(torch.utils.data.DataLoader(batches(), batch_size=32)):',
    `    xg = x.to("cuda"${pinned ? ', non_blocking=True' : ''})`,
    '    loss = torch.empty(1, device="cuda")',
    `    if i % ${itemEvery} == 0:`,
    '        loss.item()',
    '    time.sleep(0.02)',
  ].join('\n');
}

async function run(code: string): Promise<{ steps: Steps; findings: Report['attempts'][number]['findings'] }> {
  const t = companionSetup(cleanups);
  const r = await gpumem(['run', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50', '--', 'python3', '-c', code],
    { ...t.env, FAKE_TORCH_COPY_MS_PER_MIB: '1' });
  expect(r.code, r.stderr).toBe(0);
  const attempt = (JSON.parse(r.stdout) as Report).attempts[0]!;
  return { steps: attempt.plugins.companion.processes[0]?.steps as Steps, findings: attempt.findings };
}

describe('copies and synchronising calls under gpumem run (fake torch)', () => {
  it('8 MiB pageable copies and an .item() every step: blocking-copy and sync-calls, with the exact bytes', async () => {
    const { steps, findings } = await run(loop(false, 1));
    expect(steps.steps).toBe(20);
    expect(steps.copies).toMatchObject({ countPerStep: 1, bytesPerStep: 8 * MiB, blockingBytesPerStep: 8 * MiB, pageableBytesPerStep: 8 * MiB });
    // 8 ms of a ≥ 28 ms step; a loaded machine only stretches the step.
    expect(steps.copies.blockingShare).toBeGreaterThan(0.1);
    expect(steps.copies.blockingShare).toBeLessThan(0.35);
    expect(steps.syncs).toMatchObject({ stepShare: 1, byKind: { item: 1 } });
    expect(findings.map((f) => f.id)).toEqual(['blocking-copy', 'sync-calls']);
    expect(findings[0]?.title).toMatch(/copies 8\.00 MiB per step to the GPU blocking \(8\.00 MiB from pageable memory\): \d+\.\d ms, \d+% of step time$/);
    expect(findings[0]?.fix).toMatch(/^pin_memory=True in the DataLoader and \.to\(device, non_blocking=True\)/);
    expect(findings[1]?.title).toMatch(/every step: 1\.0 synchronising calls per step \(\.item\(\) 1\.0\)/);
  }, 60_000);

  it('pinned batches copied with non_blocking=True and an .item() every fourth step: neither finding', async () => {
    const { steps, findings } = await run(loop(true, 4));
    expect(steps.steps).toBe(20);
    expect(steps.copies).toMatchObject({ countPerStep: 1, bytesPerStep: 8 * MiB, blockingBytesPerStep: 0, pageableBytesPerStep: 0 });
    expect(steps.syncs?.stepShare).toBe(0.25);
    expect(findings.filter((f) => f.id === 'blocking-copy' || f.id === 'sync-calls')).toEqual([]);
  }, 60_000);
});

describe('loops without a DataLoader (fake torch)', () => {
  it('steps are bounded by optimizer.step(): 20 steps of ≥ 15 ms, the data wait unknown, no input-bound finding', async () => {
    const code = [
      'import time, torch',
      'opt = torch.optim.SGD([], step_s=0.005)',
      'for i in range(21):',
      '    time.sleep(0.010)  # forward and backward',
      '    opt.step()',
    ].join('\n');
    const { steps, findings } = await run(code);
    const s = steps as unknown as { steps: number; meanStepMs: number; dataWaitShare: number | null; boundary: string; samplesPerSec: number | null };
    expect(s.boundary).toBe('optimizer');
    expect(s.steps).toBe(20);
    expect(s.meanStepMs).toBeGreaterThanOrEqual(15);
    // Sleeps only overshoot; a loaded machine stretches them by several ms each.
    expect(s.meanStepMs).toBeLessThan(45);
    expect([s.dataWaitShare, s.samplesPerSec]).toEqual([null, null]);
    expect(findings.filter((f) => f.id === 'input-bound')).toEqual([]);
  }, 60_000);
});

describe('GPU time per phase from CUDA events (fake torch whose GPU runs in step with the host)', () => {
  it('10 ms of forward, 40 ms of backward, 5 ms of optimizer per step: measured per phase on the timed steps', async () => {
    const code = [
      'import time, torch',
      'weights = torch.empty(1 << 20, device="cuda")  # CUDA initialised, as a real model on the GPU does',
      'opt = torch.optim.SGD([], step_s=0.005)',
      'def batches():',
      '    for _ in range(21):',
      '        yield torch.empty(32, 4)',
      'for x in torch.utils.data.DataLoader(batches(), batch_size=32):',
      '    time.sleep(0.010)  # forward',
      '    loss = torch.empty(1, device="cuda")',
      '    loss.backward()',
      '    opt.step()',
    ].join('\n');
    const t = companionSetup(cleanups);
    const r = await gpumem(['run', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50', '--', 'python3', '-c', code],
      { ...t.env, FAKE_TORCH_BACKWARD_MS: '40' });
    expect(r.code, r.stderr).toBe(0);
    const steps = (JSON.parse(r.stdout) as { attempts: Array<{ plugins: { companion: { processes: Array<{ steps: Record<string, unknown> }> } } }> })
      .attempts[0]?.plugins.companion.processes[0]?.steps as { steps: number; compute: { forwardMs: number; backwardMs: number; optimizerMs: number; forwardCount: number; everySteps: number } };
    expect(steps.steps).toBe(20);
    // Steps 0, 5, 10, 15 and 20 are timed (the last one's events are read at exit).
    expect(steps.compute.everySteps).toBe(5);
    expect(steps.compute.forwardCount).toBe(5);
    // Phases 30 ms apart with a 20 ms allowance for sleeps overshooting under load: a phase given another's time
    // (or none) still fails.
    const within = (v: number, lo: number): void => {
      expect(v).toBeGreaterThanOrEqual(lo);
      expect(v).toBeLessThan(lo + 20);
    };
    within(steps.compute.forwardMs, 10);
    within(steps.compute.backwardMs, 40);
    within(steps.compute.optimizerMs, 5);
  }, 60_000);
});
