/**
 * A one-sample report brought forward to a newer sample in which only memory moved (a live view's common
 * case: a few rows grow every second, nothing starts, ends or changes parent). Rebuilding views, roles, trees
 * and the accounting of every row for that is most of a live view's work; here only the rows that moved get
 * a new view, only their trees new totals, only their GPUs a new accounting.
 */
import type { LiveCompanionProcess } from '../companion/live.js';
import type { Device, GpuProcess, HostFacts, Sample } from '../types.js';
import { accountDevice } from './accounting.js';
import type { DiagnoseReport } from './engine.js';
import { contextOnlyOf, measureUtil } from './process-view.js';
import { userTotals } from './trees.js';
import type { ProcessTree, ProcessView } from './types.js';

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameEnv(a: HostFacts['cudaEnv'], b: HostFacts['cudaEnv']): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const keys = Object.keys(b) as Array<keyof typeof b>;
  return keys.length === Object.keys(a).length && keys.every((k) => a[k] === b[k]);
}

/** Host facts the same for the analysis: the same process, parent, state, owner, command and environment. */
function sameFactsForViews(a: HostFacts | null, b: HostFacts | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  // A live enricher re-dates a process's facts at each re-read (CPU ticks, RSS); those are not analysed here.
  return a.visible === b.visible && a.startTicks === b.startTicks && a.state === b.state && a.ppid === b.ppid && a.uid === b.uid
    && a.user === b.user && sameList(a.cmdline, b.cmdline) && a.exe === b.exe && sameEnv(a.cudaEnv, b.cudaEnv) && a.startTimeMs === b.startTimeMs;
}

/** Two sets of ancestors' facts the same for the analysis (a live view re-reads them every few seconds). */
export function sameAncestors(a: Readonly<Record<number, HostFacts>>, b: Readonly<Record<number, HostFacts>>): boolean {
  const keys = Object.keys(b);
  if (keys.length !== Object.keys(a).length) return false;
  for (const k of keys) {
    const x = a[Number(k)];
    const y = b[Number(k)] as HostFacts;
    if (x === undefined || !sameFactsForViews(x, y)) return false;
  }
  return true;
}

/** A row the same process on the same GPU, with the same facts; its memory and SM share may differ. */
function sameRowButNumbers(a: GpuProcess, b: GpuProcess): boolean {
  return a.pid === b.pid && a.gpuIndex === b.gpuIndex && a.gpuUuid === b.gpuUuid && a.gpuInstanceId === b.gpuInstanceId
    && a.computeInstanceId === b.computeInstanceId && a.name === b.name && a.kind === b.kind && sameFactsForViews(a.host, b.host)
    // A row whose memory becomes or stops being unknown moves it between a tree's bytes and its unknown pids.
    && (a.usedBytes === null) === (b.usedBytes === null);
}

/** A device the same for the accounting but for its used and free memory and the numbers only drawn. */
function sameDeviceButMemory(a: Device, b: Device): boolean {
  return a === b || (a.index === b.index && a.uuid === b.uuid && a.status === b.status && a.name === b.name
    && a.memory.totalBytes === b.memory.totalBytes && a.memory.reservedBytes === b.memory.reservedBytes
    && (a.memory.usedBytes === null) === (b.memory.usedBytes === null) && a.migInstances.length === b.migInstances.length);
}

const utilClass = (pct: number | null): number => (pct === null ? 0 : pct === 0 ? 1 : 2);

/** `tree` with `deltaBytes` more on GPU `key`: a new object (reports are never changed). */
function movedTree(tree: ProcessTree, key: string, deltaBytes: number): ProcessTree {
  return { ...tree, bytesByGpu: { ...tree.bytesByGpu, [key]: (tree.bytesByGpu[key] ?? 0) + deltaBytes }, totalBytes: tree.totalBytes + deltaBytes };
}

/**
 * The report `report` (built by diagnose from `built` alone, without rules) would be for `next`, or null when
 * `next` differs in more than numbers: a row came or went, moved GPU or changed process, parent, state or
 * command; a device changed status, size or reserve. Equal to `diagnose({ samples: [next] }, [])` with the same
 * viewer, namespace, ancestors and companion but for two things: the age of a row that did not move is the
 * one at `built`, and the findings are `report`'s. The caller passes the same inputs the report was built with.
 */
export function patchReport(
  report: DiagnoseReport,
  built: Sample,
  next: Sample,
  companion: Readonly<Record<number, LiveCompanionProcess>> = {},
): DiagnoseReport | null {
  if (built.devices.length !== next.devices.length || built.processes.length !== next.processes.length) return null;
  if (report.processes.length !== next.processes.length) return null;
  for (let i = 0; i < next.devices.length; i++) if (!sameDeviceButMemory(built.devices[i] as Device, next.devices[i] as Device)) return null;
  let moved: number[] | null = null;
  for (let i = 0; i < next.processes.length; i++) {
    const a = built.processes[i] as GpuProcess;
    const b = next.processes[i] as GpuProcess;
    if (a === b) continue;
    if (!sameRowButNumbers(a, b)) return null;
    (moved ??= []).push(i);
  }
  // A row without an SM share is measured by its GPU's utilisation, and over one sample only whether that is
  // unknown, 0 % or more decides the measure (idle, or unknown): those rows are measured again when it changes.
  const utilMoved = new Set<number>();
  for (let i = 0; i < next.devices.length; i++) {
    const a = built.devices[i] as Device;
    const b = next.devices[i] as Device;
    if (a !== b && utilClass(a.utilization.gpuPct) !== utilClass(b.utilization.gpuPct)) utilMoved.add(b.index);
  }
  if (utilMoved.size > 0) {
    report.processes.forEach((v, i) => {
      if (v.gpuIndex !== null && utilMoved.has(v.gpuIndex) && (next.processes[i] as GpuProcess).smUtilPct === null && !moved?.includes(i)) (moved ??= []).push(i);
    });
  }
  const devicesMoved = next.devices.some((d, i) => d !== built.devices[i]);
  if (moved === null && !devicesMoved) return { ...report, timeMs: next.timeMs, window: { samples: 1, firstMs: next.timeMs, lastMs: next.timeMs, spanMs: 0 } };

  const processes = report.processes.slice();
  let trees = report.trees;
  let treesMoved = false;
  const gpus = new Set<number | null>();
  const window = [next];
  for (const i of moved ?? []) {
    const old = report.processes[i] as ProcessView;
    const row = next.processes[i] as GpuProcess;
    const util = measureUtil(row, old.gpuIndex, window);
    const host = row.host;
    const ageMs = host?.startTimeMs !== null && host?.startTimeMs !== undefined ? Math.max(0, next.timeMs - host.startTimeMs) : null;
    processes[i] = { ...old, row, usedBytes: row.usedBytes, util, ageMs, contextOnly: contextOnlyOf(old.role, row.usedBytes, util) };
    const delta = (row.usedBytes ?? 0) - (old.usedBytes ?? 0);
    if (delta === 0) continue;
    gpus.add(old.gpuIndex);
    const at = trees.findIndex((t) => t.pids.includes(old.pid));
    if (at < 0) return null;
    if (!treesMoved) [trees, treesMoved] = [trees.slice(), true];
    trees[at] = movedTree(trees[at] as ProcessTree, old.gpuIndex === null ? '?' : String(old.gpuIndex), delta);
  }
  if (treesMoved) trees = trees.sort((a, b) => b.totalBytes - a.totalBytes || a.rootPid - b.rootPid);
  const accounting = report.accounting.map((acc, i) => {
    const device = next.devices[i] as Device;
    return device === built.devices[i] && !gpus.has(device.index) ? acc : accountDevice(device, processes, companion);
  });
  return {
    ...report,
    timeMs: next.timeMs,
    window: { samples: 1, firstMs: next.timeMs, lastMs: next.timeMs, spanMs: 0 },
    devices: [...next.devices],
    accounting,
    processes,
    trees,
    users: treesMoved ? userTotals(processes) : report.users,
  };
}
