/**
 * Samples the GPUs and the child's process tree together at a fixed interval (100 ms = 10 Hz by default),
 * attributes GPU memory to the tree by pid, keeps per-GPU peaks, and flags memory the tree holds on a GPU
 * that was not chosen — the signature of a program that ignores CUDA_VISIBLE_DEVICES.
 */
import type { Device, GpuProcess, Sample } from '../core/types.js';
import { downsampleMean, summariseUtilization, type GpuUtilization, type UtilPoint } from '../core/run/utilization.js';
import type { GpuSource } from '../sources/index.js';
import type { ProcessTree } from './proc-tree.js';
import type { AppearedProcess, DeviceMismatch, GpuPeak } from './report.js';

export interface MonitorTick {
  tMs: number;
  sample: Sample;
  /** Tree memory per GPU uuid in this sample. */
  treeBytes: Record<string, number>;
  /** Tree processes seen on the GPUs in this sample. */
  treeProcesses: GpuProcess[];
}

export interface MonitorOptions {
  source: GpuSource;
  tree: ProcessTree;
  /** Chosen GPU uuids; null = no choice (every GPU counts as chosen, no mismatch check). */
  chosen: Set<string> | null;
  intervalMs: number;
  now: () => number;
  onTick?: (tick: MonitorTick) => void;
  onMismatch?: (mismatch: DeviceMismatch) => void;
  /** Called when reading a sample fails; sampling continues. */
  onError?: (error: unknown) => void;
  /** Pids on the GPUs before the run: memory they hold is not news. */
  knownPids?: ReadonlySet<number>;
  /** A process outside the tree and the baseline first seen holding memory on a chosen GPU. */
  onAppeared?: (appeared: AppearedProcess) => void;
}

const TIMELINE_POINTS = 300;
// A long run's raw utilization series is halved (bucket means) when it grows past this, bounding memory.
const UTIL_RAW_MAX = 4000;

export class Monitor {
  private readonly peaks = new Map<string, GpuPeak>();
  private readonly mismatches = new Map<string, DeviceMismatch>();
  private readonly appeared = new Map<string, AppearedProcess>();
  private readonly pendingAppeared = new Map<string, AppearedProcess>();
  private readonly ticks: Array<{ tMs: number; bytes: Record<string, number> }> = [];
  private readonly util = new Map<string, { index: number; totalBytes: number | null; ticks: Array<{ tMs: number } & UtilPoint> }>();
  private readonly startMs: number;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private count = 0;
  last: MonitorTick | null = null;

  constructor(private readonly options: MonitorOptions) {
    this.startMs = options.now();
  }

  /** Starts the sampling loop (first sample immediately). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops the loop and waits for an in-flight sample to finish. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const begin = this.options.now();
      await this.tick();
      const waitMs = Math.max(0, this.options.intervalMs - (this.options.now() - begin));
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Takes one sample now (also used by cleanup, outside the loop). Returns null when the read failed. */
  async tick(): Promise<MonitorTick | null> {
    const { source, tree, chosen } = this.options;
    let sample: Sample;
    try {
      tree.refresh();
      sample = await source.readSample();
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
    const tMs = this.options.now() - this.startMs;
    const byUuid = new Map<string, Device>();
    for (const d of sample.devices) if (d.uuid) byUuid.set(d.uuid, d);
    const treeBytes: Record<string, number> = {};
    const unknown = new Set<string>();
    const treeProcesses = sample.processes.filter((p) => tree.has(p.pid));
    for (const p of treeProcesses) {
      const uuid = p.gpuUuid ?? (p.gpuIndex !== null ? sample.devices.find((d) => d.index === p.gpuIndex)?.uuid ?? null : null);
      if (!uuid) continue;
      treeBytes[uuid] = (treeBytes[uuid] ?? 0) + (p.usedBytes ?? 0);
      if (p.usedBytes === null) unknown.add(uuid);
      if (chosen && !chosen.has(uuid)) this.noteMismatch(p, uuid, byUuid.get(uuid), tMs);
    }
    this.noteAppeared(sample, byUuid, tMs);
    this.noteUtilization(sample, treeProcesses, tMs);
    for (const [uuid, bytes] of Object.entries(treeBytes)) {
      const device = byUuid.get(uuid);
      const prev = this.peaks.get(uuid);
      const peak: GpuPeak = prev ?? {
        index: device?.index ?? -1, uuid, name: device?.name ?? null, peakBytes: 0, atMs: tMs,
        chosen: chosen === null || chosen.has(uuid), unknownSamples: 0,
      };
      if (!prev || bytes > peak.peakBytes) {
        peak.peakBytes = bytes;
        peak.atMs = tMs;
      }
      if (unknown.has(uuid)) peak.unknownSamples++;
      this.peaks.set(uuid, peak);
    }
    this.count++;
    this.ticks.push({ tMs, bytes: treeBytes });
    const tick: MonitorTick = { tMs, sample, treeBytes, treeProcesses };
    this.last = tick;
    this.options.onTick?.(tick);
    return tick;
  }

  private noteMismatch(p: GpuProcess, uuid: string, device: Device | undefined, tMs: number): void {
    const key = `${p.pid}/${uuid}`;
    const known = this.mismatches.get(key);
    if (known) {
      known.usedBytes = Math.max(known.usedBytes ?? 0, p.usedBytes ?? 0);
      return;
    }
    const member = this.options.tree.seen().find((m) => m.pid === p.pid);
    const mismatch: DeviceMismatch = {
      index: device?.index ?? p.gpuIndex ?? -1, uuid, name: device?.name ?? null,
      pid: p.pid, comm: member?.comm ?? p.name, usedBytes: p.usedBytes, firstSeenMs: tMs,
    };
    this.mismatches.set(key, mismatch);
    this.options.onMismatch?.(mismatch);
  }

  /**
   * Memory on a chosen GPU held by a process that is neither in the tree nor was there before the run:
   * another user's new job, or a process of the run that escaped every way of finding it. Either way the
   * run's numbers do not include it, so it is reported rather than silently left out.
   */
  private noteAppeared(sample: Sample, byUuid: Map<string, Device>, tMs: number): void {
    const { tree, chosen, knownPids } = this.options;
    if (!knownPids) return;
    // A process of the run may start between the tree scan and the GPU read of one tick: only one seen
    // outside the tree in two ticks is reported, and one the tree claims later is taken back.
    for (const [key, entry] of this.appeared) if (tree.has(entry.pid)) this.appeared.delete(key);
    const present = new Set(sample.processes.map((p) => `${p.pid}/${p.gpuUuid ?? ''}`));
    for (const key of this.pendingAppeared.keys()) if (!present.has(key)) this.pendingAppeared.delete(key);
    for (const p of sample.processes) {
      if (tree.has(p.pid) || knownPids.has(p.pid) || !p.gpuUuid || (chosen && !chosen.has(p.gpuUuid))) continue;
      const key = `${p.pid}/${p.gpuUuid}`;
      const known = this.appeared.get(key);
      if (known) {
        known.maxUsedBytes = Math.max(known.maxUsedBytes ?? 0, p.usedBytes ?? 0);
        continue;
      }
      const pending = this.pendingAppeared.get(key);
      const device = byUuid.get(p.gpuUuid);
      const entry: AppearedProcess = {
        index: device?.index ?? p.gpuIndex ?? -1, uuid: p.gpuUuid, name: device?.name ?? null, pid: p.pid, processName: p.name,
        maxUsedBytes: Math.max(pending?.maxUsedBytes ?? 0, p.usedBytes ?? 0), firstSeenMs: pending?.firstSeenMs ?? tMs,
      };
      if (!pending) {
        this.pendingAppeared.set(key, entry);
        continue;
      }
      this.pendingAppeared.delete(key);
      this.appeared.set(key, entry);
      this.options.onAppeared?.(entry);
    }
  }

  /** Device utilization and the tree's summed per-process SM % of each GPU, for the run record. */
  private noteUtilization(sample: Sample, treeProcesses: readonly GpuProcess[], tMs: number): void {
    for (const d of sample.devices) {
      if (!d.uuid) continue;
      const on = treeProcesses.filter((p) => p.gpuUuid === d.uuid || (p.gpuUuid === null && p.gpuIndex === d.index));
      const sm = on.map((p) => p.smUtilPct).filter((x): x is number => x !== null);
      let entry = this.util.get(d.uuid);
      if (!entry) this.util.set(d.uuid, (entry = { index: d.index, totalBytes: d.memory.totalBytes, ticks: [] }));
      entry.ticks.push({ tMs, gpuPct: d.utilization.gpuPct, treeSmPct: sm.length > 0 ? Math.min(100, sm.reduce((s, x) => s + x, 0)) : null });
      if (entry.ticks.length > UTIL_RAW_MAX) entry.ticks = downsampleMean(entry.ticks, UTIL_RAW_MAX / 2);
    }
  }

  /** Utilization series of the GPUs the tree used (those with a peak), by GPU index. */
  utilizationList(): GpuUtilization[] {
    const out: GpuUtilization[] = [];
    for (const p of this.peakList()) {
      const entry = this.util.get(p.uuid);
      if (entry) out.push(summariseUtilization(p.uuid, p.index, entry.totalBytes, entry.ticks));
    }
    return out;
  }

  /** Processes outside the run that appeared on its GPUs while it ran. */
  appearedList(): AppearedProcess[] {
    return [...this.appeared.values()];
  }

  /** Samples taken so far. */
  get samples(): number {
    return this.count;
  }

  /** Per-GPU peaks of the tree, by GPU index. */
  peakList(): GpuPeak[] {
    return [...this.peaks.values()].sort((a, b) => a.index - b.index);
  }

  mismatchList(): DeviceMismatch[] {
    return [...this.mismatches.values()];
  }

  /** The timeline reduced to at most 300 points, each the per-GPU maximum of its bucket (peaks survive). */
  timeline(): Array<{ tMs: number; bytes: Record<string, number> }> {
    return downsampleMax(this.ticks, TIMELINE_POINTS);
  }
}

/**
 * Reduces a timeline to at most `points` entries by bucketing consecutive samples and keeping, per key, the
 * maximum of each bucket, so a short spike is never averaged away.
 */
export function downsampleMax(
  ticks: ReadonlyArray<{ tMs: number; bytes: Record<string, number> }>,
  points: number,
): Array<{ tMs: number; bytes: Record<string, number> }> {
  if (ticks.length <= points) return ticks.map((t) => ({ tMs: t.tMs, bytes: { ...t.bytes } }));
  const out: Array<{ tMs: number; bytes: Record<string, number> }> = [];
  const size = ticks.length / points;
  for (let i = 0; i < points; i++) {
    const bucket = ticks.slice(Math.floor(i * size), Math.floor((i + 1) * size));
    if (bucket.length === 0) continue;
    const bytes: Record<string, number> = {};
    for (const t of bucket) for (const [k, v] of Object.entries(t.bytes)) bytes[k] = Math.max(bytes[k] ?? 0, v);
    out.push({ tMs: (bucket[0] as { tMs: number }).tMs, bytes });
  }
  return out;
}
