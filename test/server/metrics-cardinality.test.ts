/**
 * Per-process series are bounded: a process that leaves the sample leaves /metrics at the next scrape, and past
 * the cap the smallest holders are left out and counted once per stretch they stay out.
 */
import { describe, expect, it } from 'vitest';
import { MetricsExporter } from '../../src/server/index.js';
import type { ServerSnapshot } from '../../src/server/snapshot.js';

function snapshotOf(procs: Array<[pid: number, usedBytes: number]>): ServerSnapshot {
  const processes = procs.map(([pid, usedBytes]) => ({ pid, gpuIndex: 0, gpuUuid: 'GPU-x', usedBytes, name: 'python', host: { user: 'u', cmdline: ['python'], containerId: null, startTicks: pid * 10 } }));
  return { sample: { timeMs: 1, devices: [], processes }, hostname: 'h', companion: [], findings: [], runs: null, jobEnded: new Set() } as unknown as ServerSnapshot;
}

const pidsIn = (body: string): string[] => [...body.matchAll(/^gpumem_process_gpu_memory_bytes\{pid="(\d+)"/gm)].map((m) => m[1]!);
const dropped = (body: string): number => Number(/^gpumem_process_series_dropped_total (\d+)$/m.exec(body)?.[1]);

describe('per-process series', () => {
  it('drop out with their process', async () => {
    const exporter = new MetricsExporter();
    expect(pidsIn((await exporter.render(snapshotOf([[1, 10], [2, 20]]), false)).body)).toEqual(['1', '2']);
    expect(pidsIn((await exporter.render(snapshotOf([[1, 10]]), false)).body)).toEqual(['1']);
  });

  it('are capped to the largest holders; the rest are counted once while they stay out', async () => {
    const exporter = new MetricsExporter({ maxProcesses: 2 });
    let body = (await exporter.render(snapshotOf([[1, 10], [2, 30], [3, 20], [4, 5]]), false)).body;
    expect(pidsIn(body)).toEqual(['2', '3']);
    expect(dropped(body)).toBe(2);
    body = (await exporter.render(snapshotOf([[1, 10], [2, 30], [3, 20], [4, 5]]), true)).body;
    expect(dropped(body)).toBe(2);
    body = (await exporter.render(snapshotOf([[1, 10], [2, 30], [5, 1]]), false)).body;
    expect(pidsIn(body)).toEqual(['1', '2']);
    expect(dropped(body)).toBe(3);
  });

  it('spell the host label as asked, one spelling only', async () => {
    const device = { index: 0, uuid: 'GPU-x', name: 'H100', pciBusId: 'p', minorNumber: 0, driverVersion: '1', memory: { usedBytes: 0, freeBytes: 0, reservedBytes: 0 }, utilization: {}, migInstances: [] };
    const snap = { ...snapshotOf([]), sample: { timeMs: 1, devices: [device], processes: [] } } as unknown as ServerSnapshot;
    const line = async (e: MetricsExporter): Promise<string> => (await e.render(snap, false)).body.split('\n').find((l) => l.startsWith('DCGM_FI_DEV_FB_USED{'))!;
    expect(await line(new MetricsExporter())).toMatch(/,hostname="h",/);
    expect(await line(new MetricsExporter())).not.toMatch(/Hostname/);
    expect(await line(new MetricsExporter({ hostLabel: 'Hostname' }))).toMatch(/,Hostname="h",/);
    expect(await line(new MetricsExporter({ hostLabel: 'Hostname' }))).not.toMatch(/hostname=/);
  });
});
