/**
 * `gpumem run -- python3 script.py` end to end with the PyTorch companion: the script imports the fake
 * torch (test/python), allocates, has its memory shown by the fake NVML driver and OOMs. The report's
 * per-GPU split must equal the fake torch's memory_stats and the NVML figure exactly.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem, PY } from '../helpers/companion-e2e.js';
import { MiB } from '../../../src/core/units.js';

const SCRIPT = join(PY, 'scripts', 'supervised_train.py');
const UUID0 = 'GPU-00000000-0000-4000-8000-000000000000';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

/** The environment gpumem runs with: fake NVML, claims folder, fake torch on PYTHONPATH, private XDG folders. */
const setup = (): { dir: string; env: Record<string, string> } => companionSetup(cleanups);

function truths(stdout: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('truth ')) continue;
    const t = JSON.parse(line.slice(6)) as Record<string, number> & { tag: string };
    out[t.tag] = t;
  }
  return out;
}

interface Gpu { gpuUuid: string; gpuIndex: number; treeBytes: number; processUsedBytes: number; allocatedBytes: number; reservedBytes: number;
  unallocatedBytes: number; nonPytorchBytes: number; otherProcessesBytes: number; peakAllocatedBytes: number; numAllocRetries: number; numOoms: number }
interface Allocator { requestedBytes: number; allocatedBytes: number; reservedBytes: number; deviceLimitBytes: number; snapshotPath: string | null; source: string }
interface Report {
  runId: number; runFolder: string | null; exit: { code: number };
  env: Array<{ name: string; value: string }>;
  attempts: Array<{ ooms: Array<{ line: number; allocator?: Allocator; event: { allocatedByPytorchBytes: number; requestedBytes: number } }>;
    plugins: { companion?: { gpus: Gpu[]; snapshots: string[]; snapshotAnswers?: Array<{ file: string; problem: string | null; devices: Array<{ device: number }> }>; processes: Array<{ pid: number }> } } }>;
}

describe('gpumem run with the PyTorch companion (fake torch, fake NVML, real processes)', () => {
  it('reports allocated / reserved / non-PyTorch per GPU exactly, joins the OOM and names the snapshot', async () => {
    const t = setup();
    const r = await gpumem(['run', '--gpus', '0', '--json', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50',
      '--snapshot-on-oom', '--', 'python3', SCRIPT, 'oom', '0.4'], t.env);
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    const truth = truths(r.stderr); // with --json the child's stdout goes to stderr
    const hold = truth.hold as Record<string, number>;
    const after = truth['after-oom'] as Record<string, number>;
    const companion = report.attempts[0]?.plugins.companion;
    expect(companion?.gpus).toHaveLength(1);
    const gpu = companion?.gpus[0] as Gpu;
    // At the tree's peak: the NVML figure is the claim, and the split adds up to it exactly.
    expect(gpu.gpuUuid).toBe(UUID0);
    expect(gpu.gpuIndex).toBe(0);
    expect(gpu.treeBytes).toBe(hold.nvmlBytes);
    expect(gpu.allocatedBytes).toBe(hold.allocatedBytes);
    expect(gpu.reservedBytes).toBe(hold.reservedBytes);
    expect(gpu.unallocatedBytes).toBe((hold.reservedBytes as number) - (hold.allocatedBytes as number));
    expect(gpu.nonPytorchBytes).toBe(500 * MiB);
    expect(gpu.otherProcessesBytes).toBe(0);
    expect(gpu.allocatedBytes + gpu.unallocatedBytes + gpu.nonPytorchBytes + gpu.otherProcessesBytes).toBe(gpu.treeBytes);
    expect(gpu.peakAllocatedBytes).toBe(after.peakAllocatedBytes);
    expect(gpu.numAllocRetries).toBe(after.numAllocRetries);
    expect(gpu.numOoms).toBe(1);

    // The printed OOM is joined to the allocator's capture, and the explanation uses its exact numbers.
    const oom = report.attempts[0]?.ooms[0];
    expect(oom?.allocator?.source).toBe('observer');
    expect(oom?.allocator?.requestedBytes).toBe(4 * 1024 * MiB);
    expect(oom?.allocator?.allocatedBytes).toBe(after.allocatedBytes);
    expect(oom?.allocator?.reservedBytes).toBe(after.reservedBytes);
    expect(oom?.event.allocatedByPytorchBytes).toBe(after.allocatedBytes);

    // The snapshot went to the run folder next to the history, and the human report names it.
    expect(report.runFolder).toBe(join(t.env.XDG_DATA_HOME as string, 'gpumem', 'runs', String(report.runId)));
    const snapshot = oom?.allocator?.snapshotPath as string;
    expect(snapshot.startsWith(`${report.runFolder}/`)).toBe(true);
    expect(existsSync(snapshot)).toBe(true);
    expect(companion?.snapshots).toEqual([snapshot]);
    expect(r.stderr).toContain(`gpumem: run folder ${report.runFolder}`);
    expect(r.stderr).toContain(`gpumem snapshot ${snapshot}`);
    // The snapshot was read back and its OOM replayed through the allocator simulation for the report.
    expect(companion?.snapshotAnswers?.map((a) => a.file)).toEqual([snapshot]);
    expect(companion?.snapshotAnswers?.[0]?.problem).toBeNull();
    expect(companion?.snapshotAnswers?.[0]?.devices.map((d) => d.device)).toEqual([0]);
    // The live file for diagnose is gone once the run is over.
    expect(readdirSync(join(t.env.XDG_RUNTIME_DIR as string, 'gpumem'))).toEqual([]);

    const show = await gpumem(['runs', 'show', String(report.runId)], t.env);
    expect(show.stdout).toContain('PyTorch');
  });

  it('prints the split per GPU in the human report and the live lines', async () => {
    const t = setup();
    const r = await gpumem(['run', '--gpus', '1', '--no-history', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50',
      '--', 'python3', SCRIPT, 'ok', '0.4'], { ...t.env, GPUMEM_TEST_GPU: '1' });
    expect(r.code, r.stderr).toBe(0);
    const hold = truths(r.stdout).hold as Record<string, number>;
    expect(r.stderr).toMatch(/gpumem: companion: pid \d+ runs torch 2\.11\.0; PyTorch statistics at 50 Hz/);
    const row = r.stderr.split('\n').find((l) => /^ {4}GPU 1 {2}/.test(l)) as string;
    const cells = row.trim().split(/\s{2,}/);
    const mib = (n: number): string => `${(n / MiB).toFixed(2)} MiB`;
    expect(cells.slice(0, 6)).toEqual(['GPU 1', mib(hold.nvmlBytes as number), mib(hold.allocatedBytes as number), mib(hold.reservedBytes as number),
      mib((hold.reservedBytes as number) - (hold.allocatedBytes as number)), '500.00 MiB']);
  });

  it('a diagnose run during a supervised run splits that process exactly, and the live file goes away after', async () => {
    const t = setup();
    const go = join(t.dir, 'go');
    let output = (): string => '';
    const running = gpumem(['run', '--gpus', '0', '--no-history', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50',
      '--', 'python3', SCRIPT, 'ok', '20', go], t.env, (out) => (output = out));
    const liveDir = join(t.env.XDG_RUNTIME_DIR as string, 'gpumem');
    const end = Date.now() + 15000;
    const published = (): boolean => existsSync(liveDir) && readdirSync(liveDir).some((n) => n.endsWith('.json'));
    while (!(output().includes('truth ') && published()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    // One more publication interval, so the file holds the statistics of the hold.
    await new Promise((r) => setTimeout(r, 300));
    const d = await gpumem(['diagnose', '--json', '--window', '0', '--source', 'nvml'], t.env);
    writeFileSync(go, '');
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    const hold = truths(r.stdout).hold as Record<string, number>;
    const report = JSON.parse(d.stdout) as { accounting: Array<{ gpuIndex: number; pytorch: Array<Record<string, number>>; unknowns: string[] }>; findings: Array<{ id: string }> };
    const gpu0 = report.accounting.find((a) => a.gpuIndex === 0);
    expect(gpu0?.pytorch).toEqual([expect.objectContaining({
      pid: hold.pid, gpuUuid: UUID0, processUsedBytes: hold.nvmlBytes, allocatedBytes: hold.allocatedBytes, reservedBytes: hold.reservedBytes,
      cachedBytes: (hold.reservedBytes as number) - (hold.allocatedBytes as number), nonPytorchBytes: 500 * MiB, numAllocRetries: 0,
    })]);
    expect(gpu0?.unknowns.join('\n')).not.toContain('is not known');
    expect(readdirSync(liveDir)).toEqual([]);
    // Once the run is over the same diagnosis has no statistics to split with.
    const after = await gpumem(['diagnose', '--json', '--window', '0', '--source', 'nvml'], t.env);
    expect((JSON.parse(after.stdout) as typeof report).accounting.every((a) => a.pytorch.length === 0)).toBe(true);
  });

  it('pipeline stages get the companion too, with --snapshot-on-oom into the pipeline\'s run folder', async () => {
    const t = setup();
    const file = join(t.dir, 'p.yaml');
    writeFileSync(file, `gpus: "0"\nstages:\n  - name: train\n    command: python3 ${SCRIPT} ok 0.3\n`);
    const r = await gpumem(['pipeline', file, '--json', '--source', 'nvml', '--companion-rate', '50', '--snapshot-on-oom'], t.env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { pipelineId: number; runFolder: string; stages: Array<{ run: { attempts: Report['attempts'] } }> };
    const hold = truths(r.stderr).hold as Record<string, number>;
    const gpu = report.stages[0]?.run.attempts[0]?.plugins.companion?.gpus[0];
    expect([gpu?.allocatedBytes, gpu?.reservedBytes, gpu?.nonPytorchBytes]).toEqual([hold.allocatedBytes, hold.reservedBytes, 500 * MiB]);
    expect(report.runFolder).toBe(join(t.env.XDG_DATA_HOME as string, 'gpumem', 'runs', `pipeline-${report.pipelineId}`));
  });

  it('--no-companion leaves the child environment untouched; --memory-fraction reaches the child allocator', async () => {
    const t = setup();
    const envOf = (out: string): Record<string, string> => JSON.parse((out.split('\n').find((l) => l.startsWith('env ')) as string).slice(4)) as Record<string, string>;
    const plain = await gpumem(['run', '--no-companion', '--no-alloc-conf', '--no-history', '--', 'python3', SCRIPT, 'env', '0'], t.env);
    expect(plain.code, plain.stderr).toBe(0);
    // The same script started directly: whatever python3 (or a version-manager shim) adds is in both.
    const direct = spawnSync('python3', [SCRIPT, 'env', '0'], { env: t.env, encoding: 'utf8' });
    // Only the run marker is added (docs/run.md, "Under faults"): it is how escaped processes are found.
    const { GPUMEM_RUN_MARK: mark, ...plainEnv } = envOf(plain.stdout);
    expect(mark).toMatch(/^\d+-\d+-[0-9a-f]{8}$/);
    expect(plainEnv).toEqual(envOf(direct.stdout));
    expect(Object.keys(envOf(plain.stdout)).filter((k) => k.startsWith('GPUMEM_COMPANION'))).toEqual([]);
    // And without --no-companion the companion's variables do arrive (so the check above can fail).
    const withCompanion = await gpumem(['run', '--no-alloc-conf', '--no-history', '--', 'python3', SCRIPT, 'env', '0'], t.env);
    expect(envOf(withCompanion.stdout).GPUMEM_COMPANION_CHANNEL).toMatch(/^unix:/);

    const capped = await gpumem(['run', '--gpus', '0', '--json', '--no-history', '--memory-fraction', '0.25', '--companion-rate', '50',
      '--', 'python3', SCRIPT, 'oom', '0'], t.env);
    const report = JSON.parse(capped.stdout) as Report;
    expect(report.env.find((d) => d.name === 'GPUMEM_COMPANION_MEMORY_FRACTION')?.value).toBe('0.25');
    // The fake allocator's limit is total × fraction: the capture says 256 MiB of the fake 1 GiB.
    expect(report.attempts[0]?.ooms[0]?.allocator?.deviceLimitBytes).toBe(256 * MiB);

    for (const bad of ['0', '1.5', '-1']) {
      const refused = await gpumem(['run', '--no-history', '--memory-fraction', bad, '--', 'true'], t.env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--memory-fraction: ${Number(bad)} is not a fraction in (0, 1]`);
    }
    const both = await gpumem(['run', '--no-history', '--no-companion', '--snapshot-on-oom', '--', 'true'], t.env);
    expect(both.code).toBe(2);
  });
});

