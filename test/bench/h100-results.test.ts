/**
 * The results of the first run on a real NVIDIA H100 80GB (bench/results/2026-11-27-h100-80gb/), checked against
 * gpumem as it is now: the real `nvidia-smi -q -x` read through `--source smi` gives what NVML gave in the same
 * step; torch 2.11 snapshots parse to torch's own statistics; the real recording replays through doctor with
 * `worker-cuda` naming exactly the trainer's two DataLoader workers.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gpumemBinary, gpumemInProcess } from '../helpers/cli.js';
import { MiB } from '../../src/core/units.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/2026-11-27-h100-80gb/', import.meta.url));
const FAKE_SMI_DIR = fileURLToPath(new URL('../fake-smi/', import.meta.url));
const json = (path: string): any => JSON.parse(readFileSync(`${RESULTS}${path}`, 'utf8'));

describe('H100: nvidia-smi -q -x through --source smi', () => {
  const truth = 'part1-truth-bench/truth/';
  const r = gpumemBinary(['status', '--json', '--source', 'smi'], {
    env: { PATH: `${FAKE_SMI_DIR}:${process.env.PATH}`, GPUMEM_FAKE_SMI_XML: `${RESULTS}${truth}nvidia-smi-q.xml` },
  });
  const ours = JSON.parse(r.stdout);
  const onMachine = json(`${truth}status-smi.json`);
  const nvml = json(`${truth}status-nvml.json`);

  it('reads the XML\'s own figures: 81559 MiB total, 480 reserved, 1643 used, 79437 free, the holder\'s process', () => {
    expect(r.stderr).toBe('');
    expect(ours.source.kind).toBe('smi');
    expect(ours.devices.map((d: any) => [d.name, d.uuid, d.driverVersion, d.cudaDriverVersion])).toEqual([['NVIDIA H100 80GB HBM3', 'GPU-879c1e92-8cca-723a-07bf-57cf335543b0', '580.159.04', '13.0']]);
    expect(ours.devices[0].memory).toEqual({ totalBytes: 81559 * MiB, reservedBytes: 480 * MiB, usedBytes: 1643 * MiB, freeBytes: 79437 * MiB });
    // The smi call gpumem made on the machine (a moment after this XML was taken) read the same device.
    expect(onMachine.devices.map((d: any) => [d.uuid, d.memory.totalBytes, d.memory.reservedBytes])).toEqual([[ours.devices[0].uuid, 81559 * MiB, 480 * MiB]]);
  });

  it('equals the NVML reading of the same step: identity, total, reserved and the holder\'s bytes exactly, used and free to nvidia-smi\'s MiB', () => {
    const [s, n] = [ours.devices[0], nvml.devices[0]];
    for (const key of ['uuid', 'name', 'pciBusId', 'driverVersion', 'cudaDriverVersion', 'temperatureC'] as const) expect(s[key], key).toBe(n[key]);
    expect(s.memory.totalBytes).toBe(n.memory.totalBytes);
    expect(s.memory.reservedBytes).toBe(n.memory.reservedBytes);
    // nvidia-smi prints whole MiB; NVML's bytes: 1642.81 MiB used, 79436.19 MiB free.
    expect(Math.abs(s.memory.usedBytes - n.memory.usedBytes)).toBeLessThan(MiB);
    expect(Math.abs(s.memory.freeBytes - n.memory.freeBytes)).toBeLessThan(MiB);
    const holder = json(`${truth}holder.json`);
    expect(ours.processes.map((p: any) => [p.pid, p.gpuIndex, p.usedBytes])).toEqual([[holder.pid, 0, 1_713_373_184]]);
    expect(nvml.processes.map((p: any) => [p.pid, p.gpuIndex, p.usedBytes])).toEqual([[holder.pid, 0, 1_713_373_184]]);
  });
});

/** gpumem's numbers next to torch's, as bench/gpu/snapshot_stats.py compares them on the GPU machine. */
function compareSnapshot(ours: any, torch: any): Array<[string, unknown, unknown]> {
  const checks: Array<[string, unknown, unknown]> = [];
  for (const dev of ours.devices) {
    const t = torch.devices[String(dev.device)];
    const s = dev.summary;
    const byState = (state: string): number => t.blocksByState[state]?.bytes ?? 0;
    checks.push(
      ['segments', s.segmentCount, t.segmentCount], ['blocks', s.blockCount, t.blockCount],
      ['reserved', s.reservedBytes, t.reservedBytes], ['allocated', s.allocatedBytes, t.segmentAllocatedBytes],
      ['allocated blocks', s.allocatedBytes, byState('active_allocated')], ['active', s.activeBytes, t.segmentActiveBytes],
      ['requested', s.requestedBytes, t.segmentRequestedBytes], ['pending free', s.pendingFreeBytes, byState('active_pending_free')],
      ['inactive', s.inactiveBytes, byState('inactive')], ['segments by type', s.segmentsByType, t.segmentsByType],
      ['trace events', dev.trace?.eventCount, t.traceEventCount], ['trace actions', dev.trace?.actions, t.traceActions],
    );
  }
  checks.push(['segsum segments', ours.devices.reduce((n: number, d: any) => n + d.summary.segmentCount, 0), torch.segsumSegments]);
  return checks;
}
const mismatches = (checks: Array<[string, unknown, unknown]>): string[] =>
  checks.filter(([, a, b]) => JSON.stringify(a) !== JSON.stringify(b)).map(([what, a, b]) => `${what}: gpumem ${JSON.stringify(a)} vs torch ${JSON.stringify(b)}`);

describe('H100: torch 2.11 snapshots', () => {
  const snapshots = [
    ['before an OOM', 'part1-companion-snapshot-record/snapshot/before'],
    ['at an OOM', 'part1-companion-snapshot-record/snapshot/oom'],
    ['written by gpumem run --snapshot-on-oom', 'part1-companion-snapshot-record/companion/run-folder/oom-snapshot-1657-1'],
  ] as const;
  it.each(snapshots)('%s: every segment, block, byte and trace count equals torch\'s own', async (_what, base) => {
    const r = await gpumemInProcess(['snapshot', '--json', `${RESULTS}${base}.pickle`]);
    expect(r.stderr).toBe('');
    const ours = JSON.parse(r.stdout);
    const torch = json(`${base}.torch-stats.json`);
    expect(ours.devices.length).toBe(Object.keys(torch.devices).length);
    expect(mismatches(compareSnapshot(ours, torch))).toEqual([]);
    // Not vacuous: the snapshot holds memory and a trace.
    expect(ours.devices[0].summary.reservedBytes).toBeGreaterThan(100 * MiB);
    expect(ours.devices[0].trace.eventCount).toBeGreaterThan(100);
  });

  it('the comparison can fail: one byte off in torch\'s figures is a mismatch', async () => {
    const base = snapshots[0][1];
    const ours = JSON.parse((await gpumemInProcess(['snapshot', '--json', `${RESULTS}${base}.pickle`])).stdout);
    const torch = json(`${base}.torch-stats.json`);
    torch.devices['0'].reservedBytes += 1;
    expect(mismatches(compareSnapshot(ours, torch))).toEqual(['reserved: gpumem 580911104 vs torch 580911105']);
  });
});

describe('H100: the recording of a trainer whose DataLoader workers touched CUDA', () => {
  const record = 'part1-companion-snapshot-record/record/';
  it('replays through doctor with worker-cuda naming exactly the two worker pids', async () => {
    const r = await gpumemInProcess(['doctor', '--replay', `${RESULTS}${record}doctor-recording.ndjson`, '--json']);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout);
    const trainer = json(`${record}trainer.json`);
    const workerCuda = report.findings.filter((f: any) => f.id === 'worker-cuda');
    expect(workerCuda).toHaveLength(1);
    expect([...workerCuda[0].evidence.pids].sort()).toEqual(trainer.workerPids);
    expect(workerCuda[0].evidence.details.parentPid).toBe(trainer.pid);
    expect(report.findings.map((f: any) => f.id)).toEqual(expect.arrayContaining(json(`${record}verdict.json`).intendedFindings));
    expect(report.recordingNote).toMatch(/^Recorded on a real NVIDIA H100 80GB HBM3 \(driver 580\.159\.04\)/);
  });
});
