/**
 * Verified cleanup after the child exits: processes of its tree that are still running (DataLoader workers,
 * forgotten helpers) are listed and ended, round after round until a scan finds none (or what survived the
 * bounded rounds is reported as such); then we wait, bounded, until none of the tree's pids holds GPU
 * memory; finally memory that no process accounts for and that was not there before the run is reported —
 * the driver still holding it, or a process we cannot see.
 */
import type { Device, Sample } from '../core/types.js';
import type { Monitor } from './monitor.js';
import { readCmdline } from '../sources/index.js';
import type { ProcessTree, TreeMember } from './proc-tree.js';
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

/** Rounds of "scan, end what runs" at most: each round after the first sends SIGKILL at once. */
const MAX_ROUNDS = 20;

/** Leftovers listed in the report at most; the rest are counted (a fork bomb must not grow the report). */
const MAX_LISTED = 256;

/**
 * Ends the tree's processes still running, in rounds until a scan finds none: a process that ignores
 * SIGTERM may spawn more while the first ones are being ended, so each round re-scans the tree (its
 * marker finds the new ones, whatever session they are in) and ends what it finds. The first round gives
 * the grace period; later ones send SIGKILL right after SIGTERM, since the run's processes had their
 * grace. Bounded by MAX_ROUNDS and by `untilMs`: what still runs then is returned as survivors.
 */
async function endLeftovers(o: CleanupOptions, untilMs: number): Promise<{ leftovers: ProcessOutcome[]; notListed: number; survivors: ProcessOutcome[]; rounds: number }> {
  const held = new Map<number, number>();
  for (const p of o.monitor.last?.treeProcesses ?? []) held.set(p.pid, (held.get(p.pid) ?? 0) + (p.usedBytes ?? 0));
  const byProcess = new Map<string, ProcessOutcome>();
  let notListed = 0;
  // A process we may not signal (another user's, after a setuid exec) is not tried again every round.
  const cannot = new Set<string>();
  const key = (m: TreeMember): string => `${m.pid}:${m.startTicks}`;
  const describe = (m: TreeMember): Omit<ProcessOutcome, 'outcome' | 'detail'> => {
    const cmdline = readCmdline(m.pid);
    // Cmdline is gone once the process is; fall back to what stat told us.
    return { pid: m.pid, comm: m.comm, cmdline: cmdline ?? (m.comm ? [m.comm] : null), gpuBytes: held.get(m.pid) ?? null };
  };
  let rounds = 0;
  let running = o.tree.running();
  while (rounds < MAX_ROUNDS && o.now() < untilMs) {
    const targets = running.filter((m) => !cannot.has(key(m)));
    if (targets.length === 0) break;
    const described = targets.map(describe);
    const ended = await endProcesses(targets.map((m) => ({ pid: m.pid, startTicks: m.startTicks })), { graceMs: rounds === 0 ? o.graceMs : 0 });
    rounds++;
    targets.forEach((m, i) => {
      const r = ended[i] as { outcome: ProcessOutcome['outcome']; detail: string };
      if (r.outcome === 'failed') cannot.add(key(m));
      const detail = rounds > 1 ? `${r.detail} (found in cleanup round ${rounds}: started while the run was being ended)` : r.detail;
      if (byProcess.has(key(m)) || byProcess.size < MAX_LISTED) byProcess.set(key(m), { ...(described[i] as ProcessOutcome), outcome: r.outcome, detail });
      else notListed++;
    });
    o.tree.refresh();
    running = o.tree.running();
  }
  const survivors = running.map((m) => ({ ...describe(m), outcome: 'failed' as const, detail: byProcess.get(key(m))?.detail ?? 'still running when cleanup gave up' }));
  return { leftovers: [...byProcess.values()], notListed, survivors, rounds };
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
  const { leftovers, notListed, survivors, rounds } = await endLeftovers(o, o.now() + o.graceMs + o.timeoutMs);

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
  return {
    leftovers, memoryReleased, waitedMs: o.now() - begin, heldByNothing, toleranceBytes: o.toleranceBytes,
    survivors, rounds, ...(notListed > 0 ? { leftoversNotListed: notListed } : {}),
  };
}
