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
