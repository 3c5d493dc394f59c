/**
 * Per-process facts for the latest sample of a window: which GPU, how much, who, how old, what state,
 * how busy over the window, its role (main, worker, rank, kernel; see roles.ts) and whether it only holds
 * a CUDA context (a worker that did no GPU work).
 */
import type { LiveCompanionProcess } from '../companion/live.js';
import type { Device, GpuProcess, HostFacts, Sample } from '../types.js';
import { commandText } from './classify.js';
import { assignRoles } from './roles.js';
import type { ProcessUtil, ProcessView } from './types.js';

/** The index of the device a process row is on: its own gpuIndex, else the device with its uuid. */
export function deviceIndexOf(row: GpuProcess, devices: readonly Device[]): number | null {
  if (row.gpuIndex !== null && devices.some((d) => d.index === row.gpuIndex)) return row.gpuIndex;
  if (row.gpuUuid !== null) {
    const byUuid = devices.find((d) => d.uuid === row.gpuUuid || d.migInstances.some((m) => m.uuid === row.gpuUuid));
    if (byUuid) return byUuid.index;
  }
  return null;
}

function sameRow(a: GpuProcess, b: GpuProcess): boolean {
  if (a.pid !== b.pid) return false;
  if (a.gpuUuid !== null && b.gpuUuid !== null) return a.gpuUuid === b.gpuUuid;
  return a.gpuIndex === b.gpuIndex;
}

/** Where each pid's rows are in a list of rows (one place for most pids, several for a pid on several GPUs). */
type PidPlaces = ReadonlyMap<number, number | readonly number[]>;

/**
 * The places of a sample's rows by pid, built once per list of rows (samples never change, and a live sampler
 * hands the same list to every sample in which nothing moved): looking each process up by scanning was
 * quadratic. A list with the pids of the previous one in the same order shares its index: a live history of
 * ten minutes in which memory moved every second keeps one index, not one per sample.
 */
const pidIndex = new WeakMap<readonly GpuProcess[], PidPlaces>();
let lastIndexed: { rows: readonly GpuProcess[]; places: PidPlaces } | null = null;

function samePids(a: readonly GpuProcess[], b: readonly GpuProcess[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] as GpuProcess).pid !== (b[i] as GpuProcess).pid) return false;
  return true;
}

function placesOf(rows: readonly GpuProcess[]): PidPlaces {
  let places = pidIndex.get(rows);
  if (places) return places;
  if (lastIndexed !== null && samePids(lastIndexed.rows, rows)) places = lastIndexed.places;
  else {
    const built = new Map<number, number | number[]>();
    for (let i = 0; i < rows.length; i++) {
      const pid = (rows[i] as GpuProcess).pid;
      const at = built.get(pid);
      built.set(pid, at === undefined ? i : typeof at === 'number' ? [at, i] : (at.push(i), at));
    }
    places = built;
  }
  pidIndex.set(rows, places);
  lastIndexed = { rows, places };
  return places;
}

/** The first row of `pid` in `sample` for which `match` holds (any row of it without `match`). */
export function findRow(sample: Sample, pid: number, match?: (row: GpuProcess) => boolean): GpuProcess | undefined {
  const at = placesOf(sample.processes).get(pid);
  if (at === undefined) return undefined;
  if (typeof at === 'number') {
    const row = sample.processes[at] as GpuProcess;
    return match === undefined || match(row) ? row : undefined;
  }
  for (const i of at) {
    const row = sample.processes[i] as GpuProcess;
    if (match === undefined || match(row)) return row;
  }
  return undefined;
}

/** The row of `sample` that is `row`'s process on `row`'s GPU (sameRow), looked up without a callback per call. */
function sameRowIn(sample: Sample, row: GpuProcess): GpuProcess | undefined {
  const at = placesOf(sample.processes).get(row.pid);
  if (at === undefined) return undefined;
  if (typeof at === 'number') {
    const found = sample.processes[at] as GpuProcess;
    return sameRow(found, row) ? found : undefined;
  }
  for (const i of at) {
    const found = sample.processes[i] as GpuProcess;
    if (sameRow(found, row)) return found;
  }
  return undefined;
}

/** The row of `pid` on GPU `gpuIndex` (any GPU when null) in `sample`, found through the per-sample index. */
export function rowOnGpu(sample: Sample, pid: number, gpuIndex: number | null): GpuProcess | undefined {
  const at = placesOf(sample.processes).get(pid);
  if (at === undefined) return undefined;
  if (typeof at === 'number') {
    const row = sample.processes[at] as GpuProcess;
    return gpuIndex === null || row.gpuIndex === gpuIndex ? row : undefined;
  }
  for (const i of at) {
    const row = sample.processes[i] as GpuProcess;
    if (gpuIndex === null || row.gpuIndex === gpuIndex) return row;
  }
  return undefined;
}

/** Points of one series summed as they come: no list of points is kept (512 rows × a window of samples). */
class UtilSeries {
  samples = 0;
  private total = 0;
  private max = -Infinity;
  private lastMs = 0;
  /** Index and time of the first point of the trailing run of 0 % points; -1 when the latest point is not 0. */
  private idleFrom = -1;
  private idleFromMs = 0;
  allZero = true;

  add(timeMs: number, pct: number): void {
    if (pct === 0) {
      if (this.idleFrom < 0) [this.idleFrom, this.idleFromMs] = [this.samples, timeMs];
    } else {
      this.idleFrom = -1;
      this.allZero = false;
    }
    this.samples++;
    this.total += pct;
    if (pct > this.max) this.max = pct;
    this.lastMs = timeMs;
  }

  summary(basis: ProcessUtil['basis']): ProcessUtil {
    return {
      meanPct: this.total / this.samples,
      maxPct: this.max,
      samples: this.samples,
      idleMs: this.idleFrom < 0 ? 0 : this.lastMs - this.idleFromMs,
      idleWholeWindow: this.idleFrom === 0,
      basis,
    };
  }
}

/** Each GPU's utilisation series over a window, built once per window (every row on a GPU asks for the same). */
const deviceSeries = new WeakMap<readonly Sample[], Map<number | null, UtilSeries>>();
function deviceUtil(gpuIndex: number | null, samples: readonly Sample[]): UtilSeries {
  let byGpu = deviceSeries.get(samples);
  if (!byGpu) deviceSeries.set(samples, (byGpu = new Map()));
  let series = byGpu.get(gpuIndex);
  if (!series) {
    series = new UtilSeries();
    for (const sample of samples) {
      const pct = sample.devices.find((d) => d.index === gpuIndex)?.utilization.gpuPct;
      if (pct !== null && pct !== undefined) series.add(sample.timeMs, pct);
    }
    byGpu.set(gpuIndex, series);
  }
  return series;
}

/**
 * Measures a process's utilization over the window. Uses the driver's per-process SM % where any sample has
 * it; otherwise, when the whole GPU reported 0% in every sample, every process on it was idle too; otherwise
 * null (unknown — never guessed).
 */
export function measureUtil(row: GpuProcess, gpuIndex: number | null, samples: readonly Sample[]): ProcessUtil | null {
  const own = new UtilSeries();
  for (const sample of samples) {
    const match = sameRowIn(sample, row);
    if (match?.smUtilPct !== null && match?.smUtilPct !== undefined) own.add(sample.timeMs, match.smUtilPct);
  }
  if (own.samples > 0) return own.summary('process');
  const device = deviceUtil(gpuIndex, samples);
  return device.samples > 0 && device.allZero ? device.summary('device') : null;
}

/** CPU ticks `row`'s process used over the window: latest reading minus the earliest of the same process. */
function cpuTicksInWindow(row: GpuProcess, samples: readonly Sample[]): number | null {
  // Recordings may lack the field or carry anything in it: only whole tick counts are compared.
  const now = row.host?.cpuTicks;
  if (!Number.isSafeInteger(now) || samples.length < 2) return null;
  for (const sample of samples) {
    const host = findRow(sample, row.pid)?.host;
    if (!Number.isSafeInteger(host?.cpuTicks) || host?.startTicks !== row.host?.startTicks) continue;
    // One reading carried through the window (a live view re-reads slowly) measures nothing.
    if (host?.cpuTicksAtMs !== undefined && host.cpuTicksAtMs === row.host?.cpuTicksAtMs) return null;
    return sample === samples[samples.length - 1] ? null : (now as number) - (host?.cpuTicks as number);
  }
  return null;
}

/** Only a worker is known to need nothing but its context; a small main process is a small job. */
export function contextOnlyOf(role: ProcessView['role'], usedBytes: number | null, util: ProcessUtil | null): boolean {
  return role === 'worker' && usedBytes !== null && usedBytes > 0 && (util === null || util.maxPct === 0);
}

/** The rank a rank's environment names (RANK, else LOCAL_RANK), as a number; null when it names none. */
function rankNumber(host: HostFacts | null): number | null {
  const text = host?.cudaEnv?.RANK ?? host?.cudaEnv?.LOCAL_RANK;
  return text !== undefined && /^\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : null;
}

/**
 * Builds the view of every process row in the latest sample of the window. `ancestors` (the non-GPU parents'
 * /proc facts) and `companion` are evidence for the roles; without them a role rests on the rows alone.
 */
export function buildProcessViews(
  samples: readonly Sample[],
  ancestors: Readonly<Record<number, HostFacts>> = {},
  companion: Readonly<Record<number, LiveCompanionProcess>> = {},
): ProcessView[] {
  const latest = samples[samples.length - 1] as Sample;
  const roles = assignRoles(latest.processes.map((p) => ({ pid: p.pid, ppid: p.host?.ppid ?? null, host: p.host })), ancestors, companion);
  return latest.processes.map((row) => {
    const host = row.host;
    const gpuIndex = deviceIndexOf(row, latest.devices);
    const util = measureUtil(row, gpuIndex, samples);
    const usedBytes = row.usedBytes;
    const ppid = host?.ppid ?? null;
    const role = roles.get(row.pid) ?? 'main';
    const contextOnly = contextOnlyOf(role, usedBytes, util);
    return {
      row,
      pid: row.pid,
      gpuIndex,
      usedBytes,
      // Rows the source did not enrich count as visible: only a pid /proc positively could not find is "not visible".
      visible: host === null ? true : host.visible,
      gone: false, // decided by the engine, which knows the PID namespace
      user: host?.user ?? null,
      uid: host?.uid ?? null,
      ppid,
      command: commandText(host?.cmdline ?? null, row.name),
      state: host?.state ?? null,
      ageMs: host?.startTimeMs !== null && host?.startTimeMs !== undefined ? Math.max(0, latest.timeMs - host.startTimeMs) : null,
      util,
      contextOnly,
      cpuTicksInWindow: cpuTicksInWindow(row, samples),
      role,
      // The environment first (what the launcher set), then what the rank's companion said (mp.spawn ranks).
      rank: role === 'rank' ? (rankNumber(host) ?? companion[row.pid]?.rank?.rank ?? null) : null,
    };
  });
}
