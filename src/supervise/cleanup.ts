/**
 * Verified cleanup after the child exits: processes of its tree that are still running (DataLoader workers,
 * forgotten helpers) are listed and ended; then we wait, bounded, until none of the tree's pids holds GPU
 * memory; finally memory that no process accounts for and that was not there before the run is reported —
 * the driver still holding it, or a process we cannot see.
 */
import type { Device, Sample } from '../core/types.js';
import type { Monitor } from './monitor.js';
import { readCmdline } from '../sources/index.js';
import type { ProcessTree } from './proc-tree.js';
import type { CleanupReport, GpuRef, ProcessOutcome } from './report.js';
import { endProcesses } from './terminate.js';

export interface CleanupOptions {
  monitor: Monitor;
  tree: ProcessTree;
  /** The sample taken before the run: the level memory should return to. */
  baseline: Sample;
  /** GPU uuids to check for memory held by nothing (chosen ones and any the tree touched). */
  uuids: Set<string>;
  /** Time for workers to exit on their own after the child, before they count as leftovers. */
  settleMs: number;
  /** TERM → KILL grace for leftovers. */
  graceMs: number;
  /** Bound on waiting for the GPU memory to be released. */
  timeoutMs: number;
  toleranceBytes: number;
  now: () => number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Unaccounted memory of a device: used minus the sum of its processes; null when a process's figure is unknown. */
export function unaccountedBytes(device: Device, sample: Sample): number | null {
  if (device.memory.usedBytes === null) return null;
  let sum = 0;
  for (const p of sample.processes) {
    if (p.gpuUuid !== device.uuid) continue;
    if (p.usedBytes === null) return null;
    sum += p.usedBytes;
  }
  return device.memory.usedBytes - sum;
}

/** Runs the cleanup steps and returns what was found and done. Never throws for process or GPU errors. */
export async function verifyCleanup(o: CleanupOptions): Promise<CleanupReport> {
  const begin = o.now();
  const settleUntil = begin + o.settleMs;
  o.tree.refresh();
  while (o.tree.running().length > 0 && o.now() < settleUntil) {
    await sleep(25);
    o.tree.refresh();
  }
  const remaining = o.tree.running();
  const held = new Map<number, number>();
  for (const p of o.monitor.last?.treeProcesses ?? []) held.set(p.pid, (held.get(p.pid) ?? 0) + (p.usedBytes ?? 0));
  const ended = await endProcesses(remaining.map((m) => ({ pid: m.pid, startTicks: m.startTicks })), { graceMs: o.graceMs });
  const leftovers: ProcessOutcome[] = remaining.map((m, i) => {
    const r = ended[i] as { outcome: ProcessOutcome['outcome']; detail: string };
    return { pid: m.pid, comm: m.comm, cmdline: readCmdline(m.pid), gpuBytes: held.get(m.pid) ?? null, outcome: r.outcome, detail: r.detail };
  });
  // Cmdline is gone once the process is; fall back to what stat told us.
  for (const l of leftovers) if (l.cmdline === null && l.comm) l.cmdline = [l.comm];

  const waitUntil = o.now() + o.timeoutMs;
  let tick = await o.monitor.tick();
  while ((tick === null || tick.treeProcesses.length > 0) && o.now() < waitUntil) {
    await sleep(100);
    tick = await o.monitor.tick();
  }
  const memoryReleased = tick !== null && tick.treeProcesses.length === 0;
  const heldByNothing: Array<GpuRef & { bytes: number }> = [];
  if (tick) {
    for (const device of tick.sample.devices) {
      if (!device.uuid || !o.uuids.has(device.uuid)) continue;
      const before = o.baseline.devices.find((d) => d.uuid === device.uuid);
      const after = unaccountedBytes(device, tick.sample);
      const was = before ? unaccountedBytes(before, o.baseline) : null;
      if (after === null || was === null) continue;
      if (after - was > o.toleranceBytes) {
        heldByNothing.push({ index: device.index, uuid: device.uuid, name: device.name, bytes: after - was });
      }
    }
  }
  return { leftovers, memoryReleased, waitedMs: o.now() - begin, heldByNothing, toleranceBytes: o.toleranceBytes };
}
