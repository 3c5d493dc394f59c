/**
 * `gpumem run` over a two-rank job started like mp.spawn (test/python/scripts/mp_ranks.py): every rank gets the
 * companion, names its rank from torch.distributed, and the report shows it per rank — GPU, PyTorch peaks,
 * NVML peak, non-PyTorch bytes, step time — with the rank findings firing on the jobs that earn them and
 * staying quiet on the one that does not. Fake torch (CUDA numbers), fake NVML driver, real processes.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem, PY } from '../helpers/companion-e2e.js';
import { MiB } from '../../../src/core/units.js';
import type { RankSummary } from '../../../src/core/companion/ranks.js';
import type { RunFinding } from '../../../src/core/run/utilization.js';

const SCRIPT = join(PY, 'scripts', 'mp_ranks.py');

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Truth { rank: number; pid: number; device: number; nvmlBytes: number; peakAllocatedBytes: number; peakReservedBytes: number }
interface Report {
  exit: { code: number };
  attempts: Array<{ findings?: RunFinding[]; plugins: { companion?: { ranks?: RankSummary[]; notKept?: unknown } } }>;
}

function truths(text: string): Truth[] {
  // Two ranks share the stream: a line may arrive with the other's text glued to it.
  return [...text.matchAll(/truth (\{[^{}]*\})/g)].map((m) => JSON.parse(m[1] as string) as Truth).sort((a, b) => a.rank - b.rank);
}

async function runRanks(mode: string, gpus = '0,1'): Promise<{ report: Report; truth: Truth[]; stderr: string; ranks: RankSummary[]; findings: RunFinding[] }> {
  const t = companionSetup(cleanups);
  const r = await gpumem(['run', '--gpus', gpus, '--json', '--no-history', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50',
    '--', 'python3', SCRIPT, mode, '0.6'], { ...t.env, FAKE_TORCH_DEVICES: '2' });
  const report = JSON.parse(r.stdout) as Report;
  const attempt = report.attempts[0];
  return { report, truth: truths(r.stderr), stderr: r.stderr, ranks: attempt?.plugins.companion?.ranks ?? [], findings: attempt?.findings ?? [] };
}

const ids = (findings: readonly RunFinding[]): string[] => findings.map((f) => f.id).filter((id) => id.startsWith('rank') || id === 'nccl-buffers');

describe('gpumem run over the ranks of one job (fake torch, fake NVML, real processes)', () => {
  it('reports each rank on its own GPU with exact peaks, and no rank finding when nothing is wrong', async () => {
    const { report, truth, ranks, findings, stderr } = await runRanks('own');
    expect(report.exit.code, stderr).toBe(0);
    expect(truth.map((t) => t.device)).toEqual([0, 1]);
    expect(ranks.map((r) => [r.rank, r.worldSize, r.backend, r.rankSource])).toEqual([[0, 2, 'gloo', 'torch.distributed'], [1, 2, 'gloo', 'torch.distributed']]);
    for (const [i, r] of ranks.entries()) {
      const t = truth[i] as Truth;
      expect(r.pid).toBe(t.pid);
      expect(r.gpus.map((g) => g.gpuIndex)).toEqual([t.device]);
      expect(r.peakAllocatedBytes).toBe(t.peakAllocatedBytes);
      expect(r.peakReservedBytes).toBe(t.peakReservedBytes);
      expect(r.peakProcessBytes).toBe(t.nvmlBytes);
      expect(r.peakNonPytorchBytes).toBe(500 * MiB);
      expect(r.steps).toBe(7);
      expect(r.meanStepMs).toBeGreaterThan(0);
      expect(r.meanDataWaitMs).toBeGreaterThan(0);
      expect(r.ended).toBe(true);
    }
    expect(ids(findings)).toEqual([]);
    // The parent (an mp.spawn-style launcher) named no rank and is no row.
    expect(ranks).toHaveLength(2);
    // Ranks descend from gpumem through their parent: the channel refused nothing they sent.
    expect(report.attempts[0]?.plugins.companion?.notKept).toBeUndefined();
  }, 60_000);

  it('finds every rank on GPU 0 when two GPUs were chosen (the forgotten set_device)', async () => {
    const { ranks, findings } = await runRanks('same');
    expect(ranks.map((r) => r.gpus.map((g) => g.gpuIndex))).toEqual([[0], [0]]);
    const f = findings.find((x) => x.id === 'ranks-share-gpu');
    expect(f?.title).toMatch(/^every rank \(2\) runs on GPU 0 although 2 GPUs were there for them: rank 0 \(pid \d+\), rank 1 \(pid \d+\)$/);
    expect(f?.fix).toContain('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))');
    expect(ids(findings)).toEqual(['ranks-share-gpu']);
  }, 60_000);

  it('says nothing of two ranks sharing the one GPU that was chosen (sharing is all there was)', async () => {
    const { ranks, findings } = await runRanks('same', '0');
    expect(ranks.map((r) => r.gpus.map((g) => g.gpuIndex))).toEqual([[0], [0]]);
    expect(ids(findings)).toEqual([]);
  }, 60_000);

  it('finds the rank that holds far more than the others', async () => {
    const { ranks, findings, truth } = await runRanks('rank0');
    expect(ranks.map((r) => r.peakReservedBytes)).toEqual(truth.map((t) => t.peakReservedBytes));
    const f = findings.find((x) => x.id === 'rank-imbalance');
    expect(f?.details).toMatchObject({ rank: 0, peakBytes: truth[0]?.peakReservedBytes, othersMedianBytes: truth[1]?.peakReservedBytes });
    expect(f?.title).toMatch(/^rank 0 \(pid \d+\) peaked at 240\.00 MiB on GPU 0, 6\.00× the other ranks' 40\.00 MiB \(PyTorch reserved\)/);
    expect(ids(findings)).toEqual(['rank-imbalance']);
  }, 60_000);

  it('names the rank whose OOM came first and says the other was ended after it', async () => {
    const { report, ranks, findings } = await runRanks('oom');
    expect(report.exit.code).toBe(1);
    const f = findings.find((x) => x.id === 'rank-oom-first');
    expect(f?.details).toMatchObject({ rank: 1, ranksWithOom: 1, ranks: 2 });
    expect(f?.title).toMatch(/^rank 1 \(pid \d+\) ran out of memory first on GPU 1; rank 0 \(pid \d+\) had no OOM of its own and was ended by a signal/);
    expect(ranks.map((r) => [r.rank, r.firstOomTimeMs !== null, r.ended])).toEqual([[0, false, false], [1, true, true]]);
  }, 60_000);

  it("tells NCCL ranks what the memory outside PyTorch is", async () => {
    const { ranks, findings } = await runRanks('nccl');
    expect(ranks.map((r) => [r.backend, r.peakNonPytorchBytes])).toEqual([['nccl', 2036 * MiB], ['nccl', 2036 * MiB]]);
    const f = findings.find((x) => x.id === 'nccl-buffers');
    expect(f?.title).toBe('every NCCL rank holds 1.99 GiB outside PyTorch: NCCL\'s own buffers, on top of the CUDA context');
    expect(ids(findings)).toEqual(['nccl-buffers']);
  }, 60_000);

  it('prints the per-rank table in the human report', async () => {
    const t = companionSetup(cleanups);
    const r = await gpumem(['run', '--gpus', '0,1', '--no-history', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50',
      '--', 'python3', SCRIPT, 'rank0', '0.6'], { ...t.env, FAKE_TORCH_DEVICES: '2' });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  ranks (2, backend gloo):'));
    expect(at, r.stderr).toBeGreaterThan(0);
    expect(lines[at + 1]?.trim().split(/\s{2,}/)).toEqual(['RANK', 'LOCAL', 'PID', 'GPU', 'PEAK ALLOC', 'PEAK RESERVED', 'NVML PEAK', 'NON-PYTORCH', 'STEP', 'DATA WAIT']);
    const row0 = lines[at + 2]?.trim().split(/\s{2,}/) ?? [];
    expect(row0.slice(0, 2)).toEqual(['0', '?']);
    expect(row0.slice(3, 8)).toEqual(['GPU 0', '240.00 MiB', '240.00 MiB', '740.00 MiB', '500.00 MiB']);
    expect(r.stderr).toMatch(/rank 0 \(pid \d+\) peaked at 240\.00 MiB on GPU 0/);
  }, 60_000);
});
