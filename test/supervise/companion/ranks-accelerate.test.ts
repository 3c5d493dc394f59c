/**
 * `gpumem run -- accelerate launch --multi_gpu --num_processes 2 …` with real torch and accelerate on the CPU: the
 * same two-rank DDP job over gloo as the torchrun test (test/python/scripts/ddp_gloo.py), started by accelerate's
 * launcher (which hands the ranks to torch.distributed.run in-process). Each rank gets the companion through the
 * launcher's inherited environment and names its rank; the report lists both on the GPU each would use.
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

describe('gpumem run -- accelerate launch with two DDP ranks on the CPU (real torch and accelerate, gloo)', () => {
  it('gives both ranks the companion and reports each on its own GPU, with no rank finding', async () => {
    const python = requireTestPython();
    const accelerate = join(python, '..', 'accelerate');
    const t = companionSetup(cleanups);
    const r = await gpumem(['run', '--gpus', '0,1', '--json', '--no-history', '--source', 'nvml', '--interval-ms', '50', '--companion-rate', '10',
      '--', accelerate, 'launch', '--multi_gpu', '--num_processes', '2', '--num_machines', '1', '--mixed_precision', 'no', '--dynamo_backend', 'no',
      SCRIPT, 'own', '1.5'],
    // Accelerate's defaults file would be read from HOME: the test's own (empty) home has none.
    { ...t.env, PYTHONPATH: '', OMP_NUM_THREADS: '1', HF_HOME: join(t.env.HOME ?? '/tmp', 'hf') });
    const truth = [...r.stderr.matchAll(/truth (\{[^{}]*\})/g)].map((m) => JSON.parse(m[1] as string) as Truth).sort((a, b) => a.rank - b.rank);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.exit.code, r.stderr).toBe(0);
    expect(truth.map((x) => x.rank)).toEqual([0, 1]);
    const companion = report.attempts[0]?.plugins.companion;
    expect(companion?.notKept).toBeUndefined();
    const ranks = companion?.ranks ?? [];
    expect(ranks.map((x) => [x.pid, x.rank, x.localRank, x.worldSize, x.backend, x.rankSource]))
      .toEqual(truth.map((x) => [x.pid, x.rank, x.localRank, 2, 'gloo', 'torch.distributed']));
    expect(ranks.map((x) => x.gpus.map((g) => g.gpuIndex))).toEqual([[0], [1]]);
    expect(ranks.map((x) => x.peakProcessBytes)).toEqual([700 * MiB, 700 * MiB]);
    expect((report.attempts[0]?.findings ?? []).filter((f) => f.id.startsWith('rank'))).toEqual([]);
  }, 180_000);
});
