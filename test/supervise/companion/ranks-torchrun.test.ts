/**
 * `gpumem run -- torchrun --nproc-per-node 2 …` with real torch on the CPU: two DDP ranks over gloo
 * (test/python/scripts/ddp_gloo.py) under the real launcher. Each rank's companion gets through the channel's
 * run-process check (ranks descend from gpumem through torchrun), names its rank from the launcher's
 * environment and then torch.distributed, and the report lists both ranks with their GPU (the fake NVML driver
 * stands in for the GPU each would use), NVML peak and step timing; ranks on one GPU of two chosen are found.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem, PY } from '../helpers/companion-e2e.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { MiB } from '../../../src/core/units.js';
import type { CompanionReport } from '../../../src/core/companion/report.js';
import type { RunFinding } from '../../../src/core/run/utilization.js';

const SCRIPT = join(PY, 'scripts', 'ddp_gloo.py');

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Truth { rank: number; localRank: number; pid: number; gpu: number }
interface Report { exit: { code: number }; attempts: Array<{ findings?: RunFinding[]; plugins: { companion?: CompanionReport } }> }

async function torchrun(launcher: string[], mode: string): Promise<{ report: Report; truth: Truth[]; stderr: string }> {
  const python = requireTestPython();
  const t = companionSetup(cleanups);
  const r = await gpumem(['run', '--gpus', '0,1', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50', '--companion-rate', '10',
    '--', ...launcher.map((a) => a.replace('PYTHON', python)), '--standalone', '--nproc-per-node', '2', SCRIPT, mode, '1.5'],
  { ...t.env, PYTHONPATH: '', OMP_NUM_THREADS: '1' });
  // Two ranks and the launcher share the stream: a line may arrive with another process's text glued to it.
  const truth = [...r.stderr.matchAll(/truth (\{[^{}]*\})/g)].map((m) => JSON.parse(m[1] as string) as Truth).sort((a, b) => a.rank - b.rank);
  return { report: JSON.parse(r.stdout) as Report, truth, stderr: r.stderr };
}

describe('gpumem run -- torchrun with two DDP ranks on the CPU (real torch, gloo)', () => {
  it('gives both ranks the companion and reports each on its own GPU, with no rank finding', async () => {
    const { report, truth, stderr } = await torchrun(['PYTHON', '-m', 'torch.distributed.run'], 'own');
    expect(report.exit.code, stderr).toBe(0);
    const companion = report.attempts[0]?.plugins.companion;
    // Ranks are processes of the run: nothing they sent was refused as coming from outside it.
    expect(companion?.notKept).toBeUndefined();
    const ranks = companion?.ranks ?? [];
    expect(ranks.map((r) => [r.pid, r.rank, r.localRank, r.worldSize, r.backend, r.rankSource]))
      .toEqual(truth.map((t) => [t.pid, t.rank, t.localRank, 2, 'gloo', 'torch.distributed']));
    expect(ranks.map((r) => r.gpus.map((g) => g.gpuIndex))).toEqual([[0], [1]]);
    expect(ranks.map((r) => r.peakProcessBytes)).toEqual([700 * MiB, 700 * MiB]);
    // No CUDA in a CPU build: PyTorch's own figures are unknown, never 0.
    expect(ranks.map((r) => [r.peakAllocatedBytes, r.peakReservedBytes, r.peakNonPytorchBytes])).toEqual([[null, null, null], [null, null, null]]);
    for (const r of ranks) {
      expect(r.steps).toBe(7);
      expect(r.meanStepMs).toBeGreaterThan(0);
      expect(r.meanDataWaitMs).toBeGreaterThanOrEqual(0);
    }
    expect((report.attempts[0]?.findings ?? []).filter((f) => f.id.startsWith('rank'))).toEqual([]);
  }, 180_000);

  it('finds both ranks on GPU 0 of the two chosen', async () => {
    const { report, truth, stderr } = await torchrun(['PYTHON', '-m', 'torch.distributed.run'], 'same');
    expect(report.exit.code, stderr).toBe(0);
    expect(truth.map((t) => t.gpu)).toEqual([0, 0]);
    const ranks = report.attempts[0]?.plugins.companion?.ranks ?? [];
    expect(ranks.map((r) => r.gpus.map((g) => g.gpuIndex))).toEqual([[0], [0]]);
    const f = (report.attempts[0]?.findings ?? []).filter((x) => x.id.startsWith('rank'));
    expect(f.map((x) => x.id)).toEqual(['ranks-share-gpu']);
    expect(f[0]?.title).toBe(`every rank (2) runs on GPU 0 although 2 GPUs were there for them: rank 0 (pid ${truth[0]?.pid}), rank 1 (pid ${truth[1]?.pid})`);
  }, 180_000);
});
